package monitor

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/irq"
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

// FuzzJudge: whatever record ReadRecord accepts, a Window fed its sample
// lines (the NICs' and CPUs' part, the stack's and the added interfaces)
// against the start line's limits returns a known bound and finite,
// non-negative numbers, marshals, and is the verdict ReadRecord computed;
// Judge over the samples alone is sound too.
// go test ./monitor -run '^$' -fuzz FuzzJudge -fuzztime 60s
func FuzzJudge(f *testing.F) {
	runs, err := filepath.Glob(filepath.Join("..", "testdata", "runs", "*.jsonl"))
	if err != nil || len(runs) == 0 {
		f.Fatalf("no seed runs: %v", err)
	}
	for _, p := range runs {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(testRecord(f, 6))
	f.Add(judgeSeed(f))
	f.Add(stackSeed(f))
	f.Add([]byte(`{"type":"start","limits":[{"nic":"x","port_mbps":1e308,"usb_mbps":480,"links":[{"addr":"a","gts":3.7,"width":0}],"profile":{}}]}` + "\n" +
		`{"type":"sample","interval_s":1e-6,"cpus":[{"cpu":0,"busy_pct":1e308,"steal_pct":-5,"softirq_pct":1e308}],"nics":[{"name":"x","rx_packets_per_s":1e-300,"rx_bytes_per_s":1e300,"losses":[{"name":"n","class":"nic","per_s":1e308}]}],"threads":[{"tid":1,"user_pct":1e308,"cpu":-1}]}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rec, err := ReadRecord(bytes.NewReader(in))
		if err != nil {
			return
		}
		checkVerdict(t, Judge(rec.Samples, rec.Limits))
		v := judgeLines(t, in, rec)
		checkVerdict(t, v)
		if v.Samples != len(rec.Samples) {
			t.Errorf("%d samples judged of %d", v.Samples, len(rec.Samples))
		}
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(rec.Verdict)
		if !bytes.Equal(a, b) {
			t.Errorf("the record's lines judged again differ from ReadRecord's verdict:\n%s\n%s", a, b)
		}
	})
}

// judgeSeed is a record with every kind of limit and sample field the
// verdict weighs: a PCIe pair, a USB NIC, a tunnel, a card, threads,
// losses, live PCIe states with AER counts.
func judgeSeed(t testing.TB) []byte {
	prof := prof82576()
	limits := append(pairLimits(),
		Limits{NIC: "usb0", PortMbps: 1000, USBMbps: 480},
		Limits{NIC: "tb0", PortMbps: 10_000, Profile: prof, Links: []budget.LinkParams{{Addr: "0000:05:00.0", GTs: 8, Width: 4},
			{Addr: "0000:00:07.0", GTs: 8, Width: 4, TunnelGbps: 22}}},
		Limits{NIC: "card0", PortMbps: 10_000, RealDevice: "a router emulating it", BoundBy: "its CPU", MovesMbps: 3000})
	one := uint64(1)
	r := runOf{
		cpus: append(pairCPUs(), cpuAt(4, 0, 0, 100, 0)),
		nics: append(pairNICs(1, irq.LossRate{Name: "sysfs:rx_missed_errors", Class: irq.LossNIC, PerS: 600},
			irq.LossRate{Name: "ethtool:rx_flow_control_xoff", Class: irq.LossPauseRX, PerS: 50}),
			nicAt("usb0", 16_000, fullBytes, 16_000, fullBytes), nicAt("tb0", 700_000, fullBytes, 30_000, 62,
				irq.LossRate{Name: "ethtool:bw_in_allowance_exceeded", Class: irq.LossAllowance, PerS: 2}),
			nicAt("card0", 200_000, fullBytes, 100_000, 62)),
		threads: []irq.ThreadRate{{PID: 9, TID: 9, Comm: "iperf3", UserPct: 95, SystemPct: 5, CPU: 4}, {PID: 9, TID: 10, Comm: "iperf3", UserPct: 3, CPU: 1}},
		pcie:    []irq.PCIeState{{Address: rootPort, GTs: 5, Width: 1, AERCorrectable: &one}, {Address: "0000:01:00.0", GTs: 2.5, Width: 1}},
	}
	var b bytes.Buffer
	w := NewWriter(&b)
	if err := w.WriteStart(Header{Interval: time.Second, Command: []string{"iperf3", "-c", "peer"}, Limits: limits}); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.samples(4) {
		if err := w.WriteSample(s); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}
