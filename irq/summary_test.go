package irq

import (
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/finding"
)

// router builds samples of a 4-core router like the seed CCR2004: CPU hot
// at softirq pct, the others at others pct, virtio2-input.0 landing on hot.
func router(n int, hot int, pct, others float64, drop, squeeze, processed float64) []Sample {
	var out []Sample
	t0 := time.Unix(0, 0)
	for i := 0; i < n; i++ {
		x := Sample{Time: t0.Add(time.Duration(i+1) * time.Second), IntervalS: 1}
		for c := 0; c < 4; c++ {
			r := CPURate{CPU: c, BusyPct: others, SoftIRQPct: others / 4}
			if c == hot {
				r = CPURate{CPU: c, BusyPct: pct, SoftIRQPct: pct, NetRXPerS: 5e4,
					SoftnetDroppedPerS: drop, SoftnetSqueezedPerS: squeeze, SoftnetProcessedPerS: processed}
			}
			x.CPUs = append(x.CPUs, r)
		}
		x.NICs = []NICRate{{Name: "eth0", Queues: []QueueRate{
			{IRQ: 38, Action: "virtio2-input.0", Kind: KindRX, Index: 0, IRQsPerS: 9000, CPU: hot},
			{IRQ: 39, Action: "virtio2-output.0", Kind: KindTX, Index: 0, IRQsPerS: 10, CPU: (hot + 1) % 4},
		}}}
		out = append(out, x)
	}
	return out
}

func codes(fs []finding.Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Severity.String()+" "+string(f.Code)+" "+f.Subject)
	}
	return strings.Join(s, "; ")
}

func TestSummarizeHotCore(t *testing.T) {
	s := Summarize(router(5, 2, 99, 10, 0, 0, 0))
	if got := codes(s.Findings); got != "error irq.hot_core eth0" {
		t.Fatalf("findings = %s", got)
	}
	f := s.Findings[0]
	if f.Evidence["cpu"] != "2" || !strings.Contains(f.Summary, "IRQ 38") || strings.Contains(f.Summary, "IRQ 39") {
		t.Errorf("hot core names the wrong vectors: %s %v", f.Summary, f.Evidence)
	}
	if s.Samples != 5 || s.Seconds != 5 || s.CPUs[2].BusyPct != 99 {
		t.Errorf("window = %d samples %v s cpu2 %v", s.Samples, s.Seconds, s.CPUs[2].BusyPct)
	}
}

func TestSummarizeNoWolf(t *testing.T) {
	for name, samples := range map[string][]Sample{
		"all cores busy":   router(5, 1, 99, 80, 0, 0, 0),
		"hot core at 60%":  router(5, 1, 60, 5, 0, 0, 0),
		"one busy second":  append(router(1, 1, 99, 5, 0, 0, 0), router(4, 1, 5, 5, 0, 0, 0)...),
		"squeeze under 1‰": router(5, 1, 40, 5, 0, 50, 1e6),
		"squeeze rare":     router(5, 1, 40, 5, 0, 2, 1000),
		"one drop burst":   append(router(1, 1, 40, 5, 30, 0, 1e4), router(4, 1, 40, 5, 0, 0, 1e4)...),
		"empty":            nil,
	} {
		if s := Summarize(samples); len(s.Findings) != 0 {
			t.Errorf("%s: %s", name, codes(s.Findings))
		}
	}
}

func TestSummarizeSoftnet(t *testing.T) {
	s := Summarize(router(4, 3, 70, 5, 20, 400, 1e5))
	if got := codes(s.Findings); got != "warn softnet.drops cpu3; warn softnet.squeeze cpu3" {
		t.Errorf("findings = %s", got)
	}
}
