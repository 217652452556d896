package monitor

import (
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/stack"
)

// roomyStack is a stack with room in every layer over one interval of dt
// seconds, as a quiet host's reads: its namespace's socket counters
// without drops, the default buffer sysctls, no conntrack module, no
// shaper, no flow of the run, no process tree watched.
func roomyStack(dt float64) stack.Sample {
	return stack.Sample{IntervalS: dt, Namespaces: []stack.Namespace{{ID: 4026531840,
		Sockets: &stack.SocketCounters{TCPInSegs: 1000, TCPOutSegs: 1000},
		Buffers: &stack.Buffers{TCPRmem: [3]int64{4096, 131072, 6291456}, TCPWmem: [3]int64{4096, 16384, 4194304},
			RmemMax: 212992, WmemMax: 212992, RmemDefault: 212992, WmemDefault: 212992},
		ConntrackAbsent: true}}}
}

// judgeRoom is Judge on a host whose stack had room (roomyStack at each
// sample): what the verdicts on NICs, PCIe and CPUs alone are judged by.
func judgeRoom(samples []irq.Sample, limits []Limits) Verdict {
	return judgeStack(samples, limits, func(int, *irq.Sample) stack.Sample { return roomyStack(1) })
}

// judgeStack is Judge with the stack sample st gives for each sample.
func judgeStack(samples []irq.Sample, limits []Limits, st func(i int, x *irq.Sample) stack.Sample) Verdict {
	w := NewWindow(limits)
	for i := range samples {
		s := st(i, &samples[i])
		if s.IntervalS == 1 && samples[i].IntervalS > 0 {
			s.IntervalS = samples[i].IntervalS
		}
		w.AddSample(Sample{Sample: samples[i], Stack: &s})
	}
	return w.Verdict()
}
