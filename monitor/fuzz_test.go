package monitor

import (
	"bytes"
	"testing"
)

// FuzzReadRecord: any input either fails with a non-empty error and no
// record, or yields a record with at least one sample, a summary, and only
// what the limits allow.
// go test ./monitor -run '^$' -fuzz FuzzReadRecord -fuzztime 20s
func FuzzReadRecord(f *testing.F) {
	b := testRecord(f, 6)
	lines := bytes.SplitAfter(b, []byte("\n"))
	f.Add(b)
	f.Add(bytes.Join(lines[:4], nil))
	cut := bytes.Join(lines[:3], nil)
	f.Add(cut[:len(cut)-200]) // cut mid-sample
	f.Add(append(append([]byte{}, lines[1]...), lines[len(lines)-2]...))
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"type":"sample","interval_s":1,"cpus":[{"cpu":3,"irq_pct":null,"softirq_pct":1e308}],"nics":[{"name":"x","queues":[{"irq":1,"cpu":-1,"index":-1}]}]}`))
	f.Add([]byte(`{"sample":{"interval_s":0.5,"cpus":[{"cpu":0}]}}` + "\n" + `{"summary":{"findings":[{"code":"a","severity":"warn","evidence":{"k":"<b>"}}]}}`))
	f.Add([]byte(`{"interval_s":2}` + "\n" + `{"type":"start","command":["a"]}` + "\n"))
	f.Add([]byte(`{"type":"summary","schema":"nicdiag/v2","findings":[],"command":{"argv":["x"],"exit_code":-1,"error":"signal: killed"},"interrupted":true}` + "\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rec, err := ReadRecord(bytes.NewReader(in))
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
		if len(rec.Samples) > MaxSamples {
			t.Fatalf("%d samples", len(rec.Samples))
		}
		for _, s := range rec.Samples {
			if !(s.IntervalS >= minInterval && s.IntervalS <= maxInterval) {
				t.Fatalf("interval_s %v passed", s.IntervalS)
			}
			for _, c := range s.CPUs {
				if c.CPU < 0 {
					t.Fatalf("cpu %d passed", c.CPU)
				}
			}
		}
	})
}
