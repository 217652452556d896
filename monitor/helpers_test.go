package monitor

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/irq"
)

// The test run: a 4-CPU host receiving on eth0, an igb-like NIC with four
// TxRx vectors (IRQs 45-48, one per CPU); RSS puts the one flow on queue 2,
// so CPU 2 sits at 97% softirq while the others idle near 6%.
const (
	testCPUs = 4
	testHot  = 2
	testNIC  = "eth0"
)

var testArgv = []string{"iperf3", "-s", "-1"}

// testSamples returns n samples of the test run; the same call returns the
// same samples.
func testSamples(n int) []irq.Sample {
	t0 := time.Date(2024, 5, 14, 10, 0, 0, 0, time.UTC)
	var out []irq.Sample
	for i := range n {
		s := irq.Sample{Time: t0.Add(time.Duration(i+1) * time.Second), IntervalS: 1, IRQTimeAccounted: true}
		for c := range testCPUs {
			irqPct := 0.4
			r := irq.CPURate{CPU: c, IRQPct: &irqPct, SoftIRQPct: 1.2, BusyPct: 6 + float64(i%3), NetRXPerS: 12,
				NICIRQsPerS: 50, SoftnetProcessedPerS: 30}
			if c == testHot {
				*r.IRQPct = 2.6
				r.SoftIRQPct, r.BusyPct, r.NetRXPerS, r.NICIRQsPerS = 96.8, 100, 29400, 29000
				r.SoftnetProcessedPerS, r.SoftnetSqueezedPerS = 231000, 420
			}
			s.CPUs = append(s.CPUs, r)
		}
		n := irq.NICRate{Name: testNIC, RXPacketsPerS: 231000, RXBytesPerS: 231000 * 1514}
		for q := range 4 {
			qr := irq.QueueRate{IRQ: 45 + q, Action: testNIC + "-TxRx-" + string(rune('0'+q)), Kind: irq.KindTxRx, Index: q,
				IRQsPerS: 48, CPU: q, EffectiveCPUs: []int{q}}
			if q == testHot {
				qr.IRQsPerS = 29000
			}
			n.IRQsPerS += qr.IRQsPerS
			n.Queues = append(n.Queues, qr)
		}
		s.NICs = []irq.NICRate{n}
		out = append(out, s)
	}
	return out
}

// testQueues is the test run's NIC → IRQ map.
func testQueues() []irq.NICQueues {
	q := irq.NICQueues{NIC: testNIC, PCI: "0000:01:00.0", MatchedBy: irq.MatchMSI}
	for i := range 4 {
		q.Queues = append(q.Queues, irq.QueueIRQ{IRQ: 45 + i, Action: testNIC + "-TxRx-" + string(rune('0'+i)), Kind: irq.KindTxRx,
			Index: i, CPUs: []int{i}, CPUSource: irq.SourceEffective, Node: -1})
	}
	return []irq.NICQueues{q}
}

// testResult is the end of the test run over samples.
func testResult(samples []irq.Sample) *Result {
	return &Result{Summary: irq.Summarize(samples), Queues: testQueues(),
		Command: &CommandResult{Argv: testArgv, ExitCode: 0}, Verdict: Judge(samples, nil)}
}

// testRecord is the test run of n samples as Writer writes it.
func testRecord(t testing.TB, n int) []byte {
	t.Helper()
	samples := testSamples(n)
	var b bytes.Buffer
	w := NewWriter(&b)
	if err := w.WriteStart(Header{Interval: time.Second, Command: testArgv, Queues: testQueues()}); err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if err := w.WriteSample(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteSummary(testResult(samples)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testLines splits a test record into its start line, sample lines and
// summary line (without newlines).
func testLines(t testing.TB, n int) (start []byte, samples [][]byte, summary []byte) {
	ls := bytes.Split(bytes.TrimSuffix(testRecord(t, n), []byte("\n")), []byte("\n"))
	return ls[0], ls[1 : len(ls)-1], ls[len(ls)-1]
}

// signalHelperEnv makes the test binary signalHelper (TestMain).
const signalHelperEnv = "NICDIAG_MONITOR_TEST_SIGNAL_HELPER"

// signalHelperExit is signalHelper's exit status.
const signalHelperExit = 3

func TestMain(m *testing.M) {
	if os.Getenv(signalHelperEnv) == "1" {
		signalHelper()
	}
	os.Exit(m.Run())
}

// signalHelper catches SIGHUP, SIGINT and SIGTERM (also where they were
// ignored when it started), prints "ready", then the first of them that
// comes, and exits with signalHelperExit.
func signalHelper() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
	fmt.Println("ready")
	fmt.Println(<-c)
	os.Exit(signalHelperExit)
}
