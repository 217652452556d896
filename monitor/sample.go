package monitor

import (
	"encoding/json"
	"fmt"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/stack"
)

// Sample is one interval of a run: the CPUs', NICs' and the command's
// load (irq.Sample), this host's network stack over the same interval,
// and the interfaces the run began to watch with it. Its JSON form is a
// record's sample line: irq.Sample's fields, with "stack" and "added"
// beside them.
type Sample struct {
	irq.Sample
	// Stack is this host's stack (stack.Sampler, read right after the
	// NICs' counters); nil where it was not read.
	Stack *stack.Sample `json:"stack,omitempty"`
	// Added are the interfaces first sampled in this sample, with what is
	// known of them and why they are watched (Limits.Why): a run that
	// follows its command's flows (WithRoutedInterfaces) adds those they
	// leave by.
	Added []Limits `json:"added,omitempty"`
}

// runSampleLine is a record's sample line with the stack part.
type runSampleLine struct {
	Type   string `json:"type"` // "sample"
	Schema string `json:"schema"`
	*irq.Sample
	Stack *stack.Sample `json:"stack,omitempty"`
	Added []Limits      `json:"added,omitempty"`
}

// WriteRunSample writes one sample line of a run: irq.Sample's fields
// with "type" and "schema", and "stack" and "added" where x has them.
func (w *Writer) WriteRunSample(x Sample) error {
	return w.line(runSampleLine{Type: "sample", Schema: Schema, Sample: &x.Sample, Stack: x.Stack, Added: x.Added})
}

// AddSample weighs in a run's sample: its added interfaces' Limits, its
// NICs and CPUs (Add) and its stack (AddStack).
func (w *Window) AddSample(x Sample) {
	w.AddLimits(x.Added...)
	w.Add(x.Sample)
	if x.Stack != nil {
		w.AddStack(*x.Stack)
	}
}

// AddStack weighs in this host's stack over an interval (stack.Sampler's
// reading taken with the sample of the same interval). Its layers are
// judged over the whole run (stack.Aggregator); a window given none is
// judged without them, and cannot say that the limit was outside this
// host (Verdict).
func (w *Window) AddStack(x stack.Sample) {
	if w.stack == nil {
		w.stack = stack.NewAggregator()
	}
	w.stack.Add(x)
}

// AddLimits adds what is known of interfaces the run began to watch after
// it started (a NIC already known keeps its Limits). A NIC without Limits
// is judged against the CPUs and the command only.
func (w *Window) AddLimits(ls ...Limits) {
	for _, l := range cleanLimits(ls) {
		known := false
		for _, k := range w.limits {
			known = known || k.NIC == l.NIC
		}
		if !known && len(w.limits) < MaxQueues {
			w.limits = append(w.limits, l)
		}
	}
}

// decodeSample decodes a record's sample line and checks it (checkSample,
// checkStack).
func decodeSample(body []byte, cpus map[int]bool, queues map[queueKey]bool) (Sample, error) {
	var s Sample
	if err := json.Unmarshal(body, &s); err != nil {
		return Sample{}, err
	}
	if err := checkSample(&s.Sample, cpus, queues); err != nil {
		return Sample{}, err
	}
	if err := checkStack(s.Stack); err != nil {
		return Sample{}, fmt.Errorf("stack: %v", err)
	}
	return s, nil
}

// Bounds on a record's stack part: what stack.Sampler writes at most,
// with room to spare; past them a line is not a sampler's.
const (
	maxStackList = 4 * stack.MaxFlows
	maxStackCPUs = MaxCPUs
)

// checkStack rejects a stack part no sampler writes: lists past their
// bounds, an interval that is not one.
func checkStack(s *stack.Sample) error {
	if s == nil {
		return nil
	}
	if !(s.IntervalS >= 0 && s.IntervalS <= maxInterval) || !(s.CPUIntervalS >= 0 && s.CPUIntervalS <= maxInterval) {
		return fmt.Errorf("interval_s %v, cpu_interval_s %v", s.IntervalS, s.CPUIntervalS)
	}
	for what, n := range map[string]int{"flows": len(s.Flows), "namespaces": len(s.Namespaces), "interfaces": len(s.Interfaces), "missing": len(s.Missing)} {
		if n > maxStackList {
			return fmt.Errorf("more than %d %s", maxStackList, what)
		}
	}
	if len(s.Qdiscs) > MaxQueues || len(s.CPUs) > maxStackCPUs || len(s.Run) > maxStackCPUs {
		return fmt.Errorf("more than %d qdiscs or CPUs", MaxQueues)
	}
	for _, c := range s.CPUs {
		if len(c.Top) > maxStackList {
			return fmt.Errorf("cpu %d: more than %d processes", c.CPU, maxStackList)
		}
	}
	return nil
}
