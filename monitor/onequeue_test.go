package monitor

import (
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// TestHotCoreOneFlow: on the recorded run of one flow on queue 3 of the
// X722's eight (testdata/runs, README there), the hot core's finding says
// what run.one_queue says and gives its fix, more flows, not more queues
// or RPS over more cores; the core's verdict too. With the same core as
// hot but the packets spread over the eight queues, irq.hot_core keeps
// its fix of spreading the work.
func TestHotCoreOneFlow(t *testing.T) {
	rec, err := ReadRecordFile("../testdata/runs/x722-one-flow-one-queue.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	byCode := map[finding.Code]finding.Finding{}
	for _, f := range rec.Summary.Findings {
		byCode[f.Code] = f
	}
	hot, one, core := byCode[finding.IRQHotCore], byCode[finding.RunOneQueue], byCode[finding.RunCoreBound]
	if hot.Code == "" || one.Code == "" || core.Code == "" {
		t.Fatalf("want irq.hot_core, run.one_queue and run.core_bound: %v", rec.Summary.Findings)
	}
	if hot.Fix != one.Fix || !strings.HasPrefix(core.Fix, one.Fix) {
		t.Errorf("fixes differ:\nhot_core:   %s\none_queue:  %s\ncore_bound: %s", hot.Fix, one.Fix, core.Fix)
	}
	for _, f := range []finding.Finding{hot, one, core} {
		if !strings.Contains(f.Fix, "iperf3 -P") || strings.Contains(f.Fix, "RSS/RPS over more cores") || strings.Contains(f.Fix, "Spread the packet work") {
			t.Errorf("%s: fix %q, want more flows and no spreading over queues", f.Code, f.Fix)
		}
	}
	if !strings.Contains(hot.Summary, "queue 3 of eno1's 8 carried 97 % of its packets") || hot.Evidence["one_queue"] != "eno1 queue 3 of 8, 0.971" {
		t.Errorf("hot_core %q, evidence %v", hot.Summary, hot.Evidence)
	}

	w := NewWindow(rec.Limits)
	for _, x := range rec.Samples {
		x.NICs = spreadQueues(x.NICs)
		w.Add(x)
	}
	var spread finding.Finding
	for _, f := range w.Summary().Findings {
		if f.Code == finding.IRQHotCore {
			spread = f
		}
	}
	if !strings.Contains(spread.Fix, "more queues (ethtool -L), RSS/RPS over more cores") || spread.Evidence["one_queue"] != "" {
		t.Errorf("hot_core with the packets over eight queues: %+v", spread)
	}
}

// spreadQueues is nics with each NIC's queue packets and interrupts the
// same on every queue, their total as it was.
func spreadQueues(nics []irq.NICRate) []irq.NICRate {
	out := make([]irq.NICRate, len(nics))
	for i, n := range nics {
		var pkts, irqs float64
		for _, q := range n.Queues {
			if q.RXPacketsPerS != nil {
				pkts += *q.RXPacketsPerS
			}
			irqs += q.IRQsPerS
		}
		qs := make([]irq.QueueRate, len(n.Queues))
		for j, q := range n.Queues {
			p := pkts / float64(len(qs))
			q.RXPacketsPerS, q.IRQsPerS = &p, irqs/float64(len(qs))
			qs[j] = q
		}
		n.Queues = qs
		out[i] = n
	}
	return out
}
