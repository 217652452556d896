package report

import (
	"os"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/monitor"
)

func readSynthetic(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSyntheticRecord: the record the golden reports are drawn from reads
// back whole, with the hot core where the generator put it (the reader's
// own tests are in package monitor).
func TestSyntheticRecord(t *testing.T) {
	rec, err := monitor.ReadRecordFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Source != "ccr2004-synthetic.jsonl" {
		t.Errorf("Source = %q", rec.Source)
	}
	if len(rec.Samples) != synthSamples {
		t.Fatalf("%d samples, want %d", len(rec.Samples), synthSamples)
	}
	if len(rec.Notes) != 0 {
		t.Errorf("notes on a clean record: %q", rec.Notes)
	}
	if strings.Join(rec.Run.Command, " ") != "iperf3 -s -1" || rec.Run.ExitCode == nil || *rec.Run.ExitCode != 0 || rec.Run.Interrupted {
		t.Errorf("run = %+v", rec.Run)
	}
	if rec.Summary == nil || rec.Summary.Samples != synthSamples {
		t.Fatalf("summary = %+v", rec.Summary)
	}
	var hot *finding.Finding
	for i, f := range rec.Summary.Findings {
		if f.Code == finding.IRQHotCore {
			hot = &rec.Summary.Findings[i]
		}
	}
	if hot == nil || hot.Severity != finding.Error || hot.Evidence["cpu"] != "2" || hot.Subject != synthNIC {
		t.Fatalf("hot-core finding = %+v; findings: %v", hot, rec.Summary.Findings)
	}
	c := rec.Samples[10].CPUs[synthHot]
	if c.CPU != synthHot || c.PacketPct() < 90 {
		t.Errorf("sample 10 CPU %d packet time %.1f%%", c.CPU, c.PacketPct())
	}
}
