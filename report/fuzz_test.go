package report

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/nicdiag/nicdiag/monitor"
)

// FuzzRender: any input either fails to read (monitor.ReadRecord, itself
// fuzzed by monitor's FuzzReadRecord) or yields a record with at least one
// sample and a summary, which renders in both formats, the page as
// html/template wrote it (page_oracle_test.go).
// go test ./report -run '^$' -fuzz FuzzRender -fuzztime 20s
func FuzzRender(f *testing.F) {
	b, err := os.ReadFile(synthFile)
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	f.Add(bytes.Join(lines[:4], nil))
	f.Add(bytes.Join(lines[:3], nil)[:len(bytes.Join(lines[:3], nil))-200])
	f.Add(append(append([]byte{}, lines[1]...), lines[len(lines)-2]...))
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"type":"sample","interval_s":1,"cpus":[{"cpu":3,"irq_pct":null,"softirq_pct":1e308}],"nics":[{"name":"x","queues":[{"irq":1,"cpu":-1,"index":-1}]}]}`))
	f.Add([]byte(`{"sample":{"interval_s":0.5,"cpus":[{"cpu":0}]}}` + "\n" + `{"summary":{"findings":[{"code":"a","severity":"warn","evidence":{"k":"<b>"}}]}}`))
	f.Add([]byte(`{"interval_s":2}` + "\n" + `{"type":"start","command":["a"]}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rec, err := monitor.ReadRecord(bytes.NewReader(in))
		if err != nil {
			if rec != nil {
				t.Fatal("a record and an error")
			}
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if len(rec.Samples) == 0 || rec.Summary == nil {
			t.Fatalf("no error, but %d samples, summary %v", len(rec.Samples), rec.Summary)
		}
		for _, f := range []Format{HTML, SVG} {
			if err := Render(io.Discard, rec, f); err != nil && !errors.Is(err, monitor.ErrEmpty) {
				t.Fatalf("render %v: %v", f, err)
			}
		}
		sameAsOracle(t, "the fuzzed record's page", pageFor(rec))
	})
}
