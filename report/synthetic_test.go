package report

import (
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
)

var update = flag.Bool("update", false, "rewrite the synthetic record and the golden files in testdata/")

// The synthetic run (testdata/README.md says so too): a 4-CPU host receives
// one iperf3 TCP stream at about 2.8 Gbit/s on enp1s0, an igb-like NIC with
// four TxRx vectors. RSS hashes the single flow to queue 2, whose IRQ lands
// on CPU 2, so CPU 2 sits near 100% softirq while the other three idle:
// the shape of the seed report of the MikroTik CCR2004 (one core of four
// at 100%, 2.8 Gbit/s, total CPU 29%).
const (
	synthCPUs    = 4
	synthHot     = 2
	synthSamples = 60
	synthNIC     = "enp1s0"
	synthFile    = "testdata/ccr2004-synthetic.jsonl"
)

// syntheticSamples builds the run; the same call returns the same samples.
func syntheticSamples() []irq.Sample {
	rng := rand.New(rand.NewPCG(2004, 4))
	r1 := func(v float64) float64 { return math.Round(v*10) / 10 }
	jit := func(v, frac float64) float64 { return r1(v * (1 + frac*(rng.Float64()*2-1))) }
	t0 := time.Date(2024, 5, 14, 10, 0, 0, 0, time.UTC)
	var out []irq.Sample
	for i := range synthSamples {
		ramp := 1.0
		if i < 2 { // iperf3 starting up
			ramp = 0.35 + 0.3*float64(i)
		}
		s := irq.Sample{Time: t0.Add(time.Duration(i+1) * time.Second), IntervalS: 1, IRQTimeAccounted: true}
		pps := math.Round(jit(231000, 0.03) * ramp)
		for c := range synthCPUs {
			r := irq.CPURate{CPU: c}
			irqPct := jit(0.4, 0.5)
			r.SoftIRQPct = jit(1.2, 0.5)
			r.BusyPct = jit(6, 0.4)
			r.NetRXPerS = jit(12, 0.5)
			r.NetTXPerS = jit(3, 0.5)
			r.NICIRQsPerS = jit(50, 0.2)
			r.SoftnetProcessedPerS = jit(30, 0.5)
			if c == 0 {
				r.BusyPct = jit(14, 0.2) // iperf3 itself
				r.NetTXPerS = r1(jit(2100, 0.1) * ramp)
			}
			if c == synthHot {
				irqPct = r1(jit(2.6, 0.1) * ramp)
				r.SoftIRQPct = math.Min(97.2, r1(jit(96.8, 0.02)*ramp))
				r.BusyPct = math.Min(100, r1(r.SoftIRQPct+irqPct+jit(0.6, 0.5)))
				r.NetRXPerS = r1(jit(29400, 0.05) * ramp)
				r.NICIRQsPerS = r1(jit(29000, 0.05) * ramp)
				r.SoftnetProcessedPerS = pps
				r.SoftnetSqueezedPerS = math.Round(r1(jit(420, 0.15) * ramp))
				if i%3 != 0 && i >= 2 {
					r.SoftnetDroppedPerS = math.Round(jit(120, 0.4))
				}
			}
			r.IRQPct = &irqPct
			s.CPUs = append(s.CPUs, r)
		}
		n := irq.NICRate{Name: synthNIC, RXPacketsPerS: pps, TXPacketsPerS: math.Round(pps / 2.1),
			RXBytesPerS: math.Round(pps * 1514), TXBytesPerS: math.Round(pps / 2.1 * 66)}
		n.Queues = append(n.Queues, irq.QueueRate{IRQ: 44, Action: synthNIC, Kind: irq.KindOther, Index: -1, IRQsPerS: 0, CPU: -1, EffectiveCPUs: []int{0}})
		for q := range 4 {
			qr := irq.QueueRate{IRQ: 45 + q, Action: synthNIC + "-TxRx-" + string(rune('0'+q)), Kind: irq.KindTxRx, Index: q,
				IRQsPerS: jit(48, 0.2), CPU: q, EffectiveCPUs: []int{q}}
			if q == synthHot {
				qr.IRQsPerS = r1(jit(29000, 0.05) * ramp)
			}
			n.IRQsPerS += qr.IRQsPerS
			n.Queues = append(n.Queues, qr)
		}
		s.NICs = []irq.NICRate{n}
		out = append(out, s)
	}
	return out
}

var synthArgv = []string{"iperf3", "-s", "-1"}

func synthQueues() []irq.NICQueues {
	q := irq.NICQueues{NIC: synthNIC, PCI: "0000:01:00.0", MatchedBy: irq.MatchMSI}
	q.Queues = append(q.Queues, irq.QueueIRQ{IRQ: 44, Action: synthNIC, Kind: irq.KindOther, Index: -1, CPUs: []int{0}, CPUSource: irq.SourceEffective, Node: -1})
	for i := range 4 {
		q.Queues = append(q.Queues, irq.QueueIRQ{IRQ: 45 + i, Action: synthNIC + "-TxRx-" + string(rune('0'+i)), Kind: irq.KindTxRx,
			Index: i, CPUs: []int{i}, CPUSource: irq.SourceEffective, Node: -1})
	}
	return []irq.NICQueues{q}
}

// syntheticRecord is the run as monitor --record writes it.
func syntheticRecord(t testing.TB) []byte {
	t.Helper()
	samples := syntheticSamples()
	var b bytes.Buffer
	w := monitor.NewWriter(&b)
	if err := w.WriteStart(monitor.Header{Interval: time.Second, Command: synthArgv, Queues: synthQueues()}); err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if err := w.WriteSample(s); err != nil {
			t.Fatal(err)
		}
	}
	res := &monitor.Result{Summary: irq.Summarize(samples), Queues: synthQueues(), Command: &monitor.CommandResult{Argv: synthArgv}}
	if err := w.WriteSummary(res); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSyntheticRecordCurrent keeps testdata/ccr2004-synthetic.jsonl equal
// to what syntheticRecord builds with monitor.Writer (-update rewrites it):
// the record format stays byte for byte what it was.
func TestSyntheticRecordCurrent(t *testing.T) {
	want := syntheticRecord(t)
	if *update {
		if err := os.WriteFile(synthFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go test ./report -run TestSyntheticRecordCurrent -update", filepath.Base(synthFile))
	}
}
