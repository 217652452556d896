package monitor

import (
	"fmt"
	"io"
	"testing"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/stack"
)

// benchRunSample is one sample of a run on the 128-CPU layout (16 NICs
// of 16 queues, 50 threads) with the most a stack sample holds: 64 flows,
// 2 namespaces, a qdisc with 100 classes, every CPU's other work with its
// top three, the run's threads on 16 CPUs, 16 routed interfaces.
func benchRunSample() Sample {
	var cpus []irq.CPURate
	for c := range 128 {
		cpus = append(cpus, cpuAt(c, float64(c%7), float64(c%50), float64(c%30), 2))
	}
	var nics []irq.NICRate
	for k := range 16 {
		n := nicAt(fmt.Sprintf("eth%d", k), 500_000, fullBytes, 250_000, 62)
		for q := range 16 {
			rx, tx := 30_000.0, 15_000.0
			n.Queues = append(n.Queues, irq.QueueRate{IRQ: 100 + k*16 + q, Kind: irq.KindTxRx, Index: q, CPU: (k*16 + q) % 128,
				IRQsPerS: 5000, RXPacketsPerS: &rx, TXPacketsPerS: &tx})
		}
		nics = append(nics, n)
	}
	var threads []irq.ThreadRate
	for i := range 50 {
		threads = append(threads, irq.ThreadRate{PID: 1000, TID: 1000 + i, Comm: "iperf3", UserPct: float64(i % 60), SystemPct: 10, CPU: (i * 5) % 128})
	}
	st := roomyStack(1)
	st.Namespaces = append(st.Namespaces, st.Namespaces[0])
	st.Namespaces[1].ID = 2
	st.RunPID = 1000
	for i := range stack.MaxFlows {
		st.Flows = append(st.Flows, stack.Flow{Netns: selfNS, Proto: "tcp", State: "established", Local: fmt.Sprintf("10.0.0.1:%d", 40000+i),
			Peer: "10.0.0.2:5201", Cookie: uint64(i + 1), PID: 1000, Comm: "iperf3", BytesSent: 1e8, BytesAcked: 1e8, SegsOut: 70000,
			BusyUS: 900000, RwndLimitedUS: 1000, Timers: true, RTTUS: 200, Cwnd: 100, SndMSS: 1448, DeliveryRate: 1e8, Sndbuf: 4 << 20})
	}
	st.Qdiscs = append(st.Qdiscs, stack.Qdisc{Netns: selfNS, Iface: "eth0", Kind: "htb", Handle: "1:", Parent: "root", Bytes: 1e8, Packets: 70000})
	for i := range 100 {
		st.Qdiscs = append(st.Qdiscs, stack.Qdisc{Netns: selfNS, Iface: "eth0", Kind: "htb", Handle: fmt.Sprintf("1:%d", i+10), Parent: "1:1",
			Class: true, Rate: 1.25e8, Ceil: 1.25e9, Bytes: 1e6, Packets: 700})
	}
	for c := range 128 {
		st.CPUs = append(st.CPUs, stack.CPUWork{CPU: c, PacketPct: 1, OtherPct: float64(c % 40), Top: []stack.ProcWork{
			{PID: 200 + c, Comm: "yes", Pct: 20}, {PID: 400 + c, Comm: "gzip", Pct: 10}, {PID: 600 + c, Comm: "sshd", Pct: 1}}})
	}
	st.CPUIntervalS = 1
	for c := range 16 {
		st.Run = append(st.Run, stack.RunCPU{CPU: c * 5, Pct: 30, WaitPct: 5})
	}
	for k := range 16 {
		st.Interfaces = append(st.Interfaces, stack.Interface{Netns: selfNS, Name: fmt.Sprintf("eth%d", k), Index: k + 2, Flows: 4})
	}
	x := runOf{cpus: cpus, nics: nics, threads: threads}.samples(1)[0]
	return Sample{Sample: x, Stack: &st}
}

// BenchmarkAddSample is what one such sample costs the run besides its
// reading: the window's sums (the stack's aggregation included), its line
// in the record, and reading the line back (ReadRecord's part).
func BenchmarkAddSample(b *testing.B) {
	x := benchRunSample()
	b.Run("window", func(b *testing.B) {
		w := NewWindow(nil)
		b.ReportAllocs()
		for b.Loop() {
			w.AddSample(x)
		}
	})
	b.Run("window-without-stack", func(b *testing.B) {
		w := NewWindow(nil)
		b.ReportAllocs()
		for b.Loop() {
			w.Add(x.Sample)
		}
	})
	var line []byte
	b.Run("record-line", func(b *testing.B) {
		w := NewWriter(io.Discard)
		b.ReportAllocs()
		for b.Loop() {
			if err := w.WriteRunSample(x); err != nil {
				b.Fatal(err)
			}
		}
		line, _ = runLine(x)
		b.ReportMetric(float64(len(line)), "line-bytes")
	})
	b.Run("read-line", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeSample(line, map[int]bool{}, map[queueKey]bool{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// runLine is x's record line.
func runLine(x Sample) ([]byte, error) {
	var b bytesWriter
	err := NewWriter(&b).WriteRunSample(x)
	return b, err
}

type bytesWriter []byte

func (w *bytesWriter) Write(p []byte) (int, error) { *w = append(*w, p...); return len(p), nil }
