package stack

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// u32 returns a pointer to v.
func u32(v uint32) *uint32 { return &v }

// run makes n one-second samples, each from mk(i).
func run(n int, mk func(i int) Sample) []Sample {
	out := make([]Sample, n)
	for i := range out {
		out[i] = mk(i)
		out[i].IntervalS = 1
	}
	return out
}

// summaryOf aggregates xs.
func summaryOf(xs []Sample) Summary {
	a := NewAggregator()
	for _, x := range xs {
		a.Add(x)
	}
	return a.Summary()
}

// healthyNS is a namespace with the VM's buffer sysctls, no drops and an
// empty conntrack table.
func healthyNS(id uint64) Namespace {
	return Namespace{ID: id, Sockets: &SocketCounters{TCPInSegs: 1000, TCPOutSegs: 90000},
		Buffers:   &Buffers{TCPRmem: [3]int64{4096, 131072, 6 << 20}, TCPWmem: [3]int64{4096, 16384, 4 << 20}, RmemMax: 208 << 10, WmemMax: 208 << 10, RmemDefault: 208 << 10},
		Conntrack: &Conntrack{Count: 10, Max: 262144, StatsKnown: true}}
}

// The run, rebuilt: a 40 ms path, this host receiving, its
// net.ipv4.tcp_rmem max at 256 KiB: the flow moved 22 Mb/s, the window
// (128 KiB advertised of the 256 KiB buffer) allows 26 Mb/s over 40 ms.
// The transport binds the run on this host's window and names tcp_rmem.
func TestJudgeLocalWindow40ms(t *testing.T) {
	xs := run(10, func(i int) Sample {
		ns := healthyNS(1)
		ns.Buffers.TCPRmem[2] = 256 << 10
		return Sample{RunPID: 9, Namespaces: []Namespace{ns}, Flows: []Flow{{Netns: 1, Proto: "tcp", State: "established",
			Local: "10.0.0.2:5201", Peer: "10.0.0.1:40000", Cookie: 1, PID: 9, Comm: "iperf3", BytesReceived: 22e6 / 8,
			RTTUS: 40000, RcvRTTUS: 40000, Timers: true, RcvWnd: u32(128 << 10), Rcvbuf: 256 << 10, RmemAlloc: 4096}},
			CPUs: []CPUWork{{CPU: 0, OtherPct: 5}}, CPUIntervalS: 1, Run: []RunCPU{{CPU: 0, Pct: 3}}}
	})
	s := summaryOf(xs)
	j := s.judgement(LayerTransport, "local_window")
	if j == nil || !j.Bound || j.Outside || s.state(LayerTransport).State != StateBound {
		dump(t, s)
		t.Fatal("no local window")
	}
	if j.AchievedMbps < 21.9 || j.AchievedMbps > 22.1 || j.CeilingMbps < 26 || j.CeilingMbps > 26.3 ||
		!strings.Contains(j.Summary, "net.ipv4.tcp_rmem's max, 256 KiB") || !strings.Contains(j.Summary, "40 ms") ||
		j.Fix != "sysctl -w net.ipv4.tcp_rmem='4096 131072 1048576' (in the receiver's network namespace)" {
		t.Errorf("%+v", j)
	}
	if s.Room() {
		t.Error("room with a window bound")
	}
	// The same with a 6 MiB max: the buffer could grow, nothing binds.
	for i := range xs {
		xs[i].Namespaces[0].Buffers.TCPRmem[2] = 6 << 20
		xs[i].Flows[0].Rcvbuf, xs[i].Flows[0].RcvWnd = 3<<20, u32(1536<<10)
	}
	if h := summaryOf(xs); h.judgement(LayerTransport, "local_window") != nil || !h.Room() {
		dump(t, h)
		t.Error("a 1.5 MiB window at 22 Mb/s × 40 ms judged")
	}
}

// A receiver on a loaded host: 6 Gb/s over a veth whose round trip is
// 30 µs, its receive queue read late, so that its own RTT estimate says
// 36 ms and autotuning took its buffer to tcp_rmem's max. The window it
// advertised held only what the application left unread: not bound. The
// same receiver with its sender on this host is judged by the sender's
// timers alone.
func TestJudgeReceiverReadLate(t *testing.T) {
	recv := Flow{Netns: 1, Proto: "tcp", State: "established", Local: "10.0.0.2:5201", Peer: "10.0.0.1:40000", Cookie: 1, PID: 9,
		Comm: "iperf3", BytesReceived: 6e9 / 8, RTTUS: 40, MinRTTUS: 30, RcvRTTUS: 36000, Timers: true,
		RcvWnd: u32(29 << 20), Rcvbuf: 32 << 20, RmemAlloc: 30 << 20}
	sample := func(flows ...Flow) Sample {
		ns := healthyNS(1)
		ns.Buffers.TCPRmem[2] = 32 << 20
		return Sample{RunPID: 9, Namespaces: []Namespace{ns}, Flows: flows}
	}
	if s := summaryOf(run(5, func(int) Sample { return sample(recv) })); s.judgement(LayerTransport, "local_window") != nil {
		dump(t, s)
		t.Error("a receiver read late, judged by its own RTT estimate")
	}
	// Without a least RTT the estimate is all there is: bound.
	recv.MinRTTUS = 0
	if s := summaryOf(run(5, func(int) Sample { return sample(recv) })); s.judgement(LayerTransport, "local_window") == nil {
		t.Error("no window judged from the receiver's estimate alone")
	}
	snd := sender(0, 0, 0)
	snd.Local, snd.Peer = recv.Peer, recv.Local
	if s := summaryOf(run(5, func(int) Sample { return sample(recv, snd) })); s.judgement(LayerTransport, "local_window") != nil {
		dump(t, s)
		t.Error("a receiver whose local sender waited on no window")
	}
}

// sender returns a sending flow's sample: 800 Mb/s, busy 90 % of each
// second, with the given limit timers and retransmits.
func sender(rwnd, sndbuf, retrans uint64) Flow {
	return Flow{Netns: 1, Proto: "tcp", Local: "10.0.0.1:40000", Peer: "10.0.0.2:5201", Cookie: 2, PID: 9, Comm: "iperf3",
		BytesSent: 100e6, BytesAcked: 100e6, BytesRetrans: retrans, BusyUS: 900000, RwndLimitedUS: rwnd, SndbufLimitedUS: sndbuf,
		Timers: true, RTTUS: 2000, SndWnd: u32(64 << 10), Sndbuf: 256 << 10}
}

// roomy gives f a peer window of 6 MiB, far over its bytes in flight.
func roomy(f Flow) Flow {
	f.SndWnd = u32(6 << 20)
	return f
}

func TestJudgeSender(t *testing.T) {
	for _, c := range []struct {
		name    string
		f       Flow
		kind    string
		bound   bool
		outside bool
		in      string
	}{
		{"peer window", sender(800000, 0, 0), "peer_window", true, true, "peer's receive window 89 %"},
		{"send buffer", sender(0, 700000, 0), "send_buffer", true, false, "its own send buffer 78 %"},
		{"loss", sender(0, 0, 3e6), "path_loss", true, true, "retransmitted 3 %"},
		{"congestion", sender(0, 0, 0), "congestion", false, true, "congestion control"},
		// 800 Mb/s over 2 ms keeps 200 kB in flight: a 64 KiB window was
		// full whenever it was open, though the timer caught 22 %.
		{"full window", sender(200000, 0, 0), "peer_window", true, true, "peer's receive window 22 %"},
		{"roomy window", roomy(sender(200000, 0, 0)), "congestion", false, true, "congestion control"},
	} {
		s := summaryOf(run(5, func(int) Sample {
			return Sample{RunPID: 9, Namespaces: []Namespace{healthyNS(1)}, Flows: []Flow{c.f}}
		}))
		j := s.judgement(LayerTransport, c.kind)
		if j == nil || j.Bound != c.bound || j.Outside != c.outside || !strings.Contains(j.Summary, c.in) {
			dump(t, s)
			t.Errorf("%s: %+v", c.name, j)
			continue
		}
		if want := c.bound && !c.outside; (s.state(LayerTransport).State == StateBound) != want {
			t.Errorf("%s: layer %+v", c.name, s.state(LayerTransport))
		}
	}
	app := sender(0, 0, 0)
	app.BusyUS = 200000
	s := summaryOf(run(5, func(int) Sample { return Sample{Flows: []Flow{app}} }))
	if j := s.judgement(LayerTransport, "app_limited"); j == nil || j.Bound || s.state(LayerTransport).State != StateRoom {
		t.Errorf("app-limited: %+v %+v", j, s.Layers)
	}
}

func TestJudgeQdiscs(t *testing.T) {
	qs := []Qdisc{
		{Netns: 1, Iface: "eth0", Kind: "htb", Handle: "1:", Parent: "root", Bytes: 12e6, Packets: 8000},
		{Netns: 1, Iface: "eth0", Kind: "htb", Handle: "1:10", Parent: "1:1", Class: true, Rate: 6.25e6, Ceil: 12.5e6, Bytes: 12e6, Packets: 8000, Overlimits: 900},
		{Netns: 1, Iface: "eth0", Kind: "htb", Handle: "1:20", Parent: "root", Class: true, Rate: 1.25e6, Ceil: 12.5e6, Bytes: 4e6, Packets: 3000},
		{Netns: 1, Iface: "eth1", Kind: "cake", Handle: "8001:", Parent: "root", Rate: 125e6, Bytes: 30e6, Packets: 20000},
		{Netns: 1, Iface: "eth2", Kind: "pfifo_fast", Handle: "0:", Parent: "root", Bytes: 1e6, Packets: 1000, Drops: 50},
	}
	s := summaryOf(run(4, func(int) Sample { return Sample{Qdiscs: qs} }))
	var htb, cake, drops *Judgement
	for i := range s.Judgements {
		j := &s.Judgements[i]
		switch {
		case j.Kind == "shaper" && strings.Contains(j.Subject, "htb class 1:10"):
			htb = j
		case j.Kind == "shaper" && strings.Contains(j.Subject, "cake"):
			cake = j
		case j.Kind == "qdisc_drops":
			drops = j
		}
	}
	// The class borrows up to its ceil, 100 Mb/s: 96 Mb/s is 96 % of it.
	if htb == nil || !htb.Bound || htb.CeilingMbps != 100 || htb.AchievedMbps != 96 ||
		htb.Fix != "tc class change dev eth0 classid 1:10 htb rate 50mbit ceil 200mbit (and its parents' ceil), if the shaping is not meant that low" {
		t.Errorf("htb: %+v", htb)
	}
	// A class under the qdisc has nothing to borrow from: its rate binds.
	if j := findJ(s, "htb class 1:20"); j == nil || j.CeilingMbps != 10 || !j.Bound {
		t.Errorf("root class: %+v", j)
	}
	if cake == nil || cake.Bound || cake.CeilingMbps != 1000 || cake.Share != 0.24 {
		t.Errorf("cake at a quarter of its bandwidth: %+v", cake)
	}
	if drops == nil || !drops.Bound || !strings.Contains(drops.Fix, "txqueuelen") || !strings.Contains(drops.Summary, "dropped 4.8 %") {
		t.Errorf("drops: %+v", drops)
	}
	if s.state(LayerQdisc).State != StateBound {
		t.Errorf("layer %+v", s.state(LayerQdisc))
	}
}

func TestJudgeOtherWork(t *testing.T) {
	cpus := []CPUWork{{CPU: 0, OtherPct: 5},
		{CPU: 1, OtherPct: 40, Top: []ProcWork{{PID: 700, Comm: "yes", Pct: 20}, {PID: 701, Comm: "yes", Pct: 19}}}}
	runs := []RunCPU{{CPU: 0, Pct: 30}, {CPU: 1, Pct: 4, WaitPct: 45}}
	sample := func(run []RunCPU) Sample { return Sample{RunPID: 9, CPUs: cpus, CPUIntervalS: 1, Run: run} }
	s := summaryOf(run(3, func(int) Sample { return sample(runs) }))
	j := s.judgement(LayerOtherWork, "other_work")
	if j == nil || !j.Bound || j.Subject != "CPU 1" || !strings.Contains(j.Summary, "yes (PID 700) 20 %, yes (PID 701) 19 %") ||
		!strings.Contains(j.Summary, "waited 45 %") || len(s.Bound()) != 1 {
		t.Fatalf("%+v", s.Judgements)
	}
	// A paced sender that wanted a quarter of a CPU (its time and its
	// waits at each wake) is not held by a busy one: it catches up.
	paced := []RunCPU{{CPU: 0, Pct: 2, WaitPct: 1}, {CPU: 1, Pct: 4, WaitPct: 24}}
	if s := summaryOf(run(3, func(int) Sample { return sample(paced) })); s.judgement(LayerOtherWork, "other_work") != nil {
		t.Errorf("a paced run that wanted 31 %% of a CPU: %+v", s.Judgements)
	}
	// A run that took and wanted little of a busy CPU is not held by it.
	runs[1].WaitPct = 1
	if s := summaryOf(run(3, func(int) Sample { return sample(runs) })); s.judgement(LayerOtherWork, "other_work") != nil {
		t.Errorf("a rate-limited run: %+v", s.Judgements)
	}
	// One that worked on a CPU other work took most of is.
	cpus[1].OtherPct, runs[1].Pct = 80, 15
	if s := summaryOf(run(3, func(int) Sample { return sample(runs) })); s.judgement(LayerOtherWork, "other_work") == nil {
		t.Errorf("a run at 15 %% of a CPU others took 80 %% of: %+v", s.CPUs)
	}
	// Without a process tree, other work cannot be told from the run's;
	// without a scan, it is not known.
	if s := summaryOf(run(3, func(int) Sample { return Sample{CPUs: cpus, CPUIntervalS: 1} })); s.state(LayerOtherWork).State != StateUnknown {
		t.Errorf("no tree: %+v", s.state(LayerOtherWork))
	}
	if s := summaryOf(run(3, func(int) Sample { return Sample{RunPID: 9, Run: runs} })); s.state(LayerOtherWork).State != StateUnknown {
		t.Errorf("no scan: %+v", s.state(LayerOtherWork))
	}
}

// A healthy run: every layer read and with room.
func TestJudgeHealthy(t *testing.T) {
	f := sender(0, 0, 0)
	f.BusyUS = 950000
	s := summaryOf(run(5, func(int) Sample {
		return Sample{RunPID: 9, Namespaces: []Namespace{healthyNS(1)}, Flows: []Flow{f},
			Qdiscs: []Qdisc{{Netns: 1, Iface: "eth0", Kind: "fq_codel", Handle: "0:", Parent: "root", Bytes: 100e6, Packets: 70000}},
			CPUs:   []CPUWork{{CPU: 0, OtherPct: 10}}, CPUIntervalS: 1, Run: []RunCPU{{CPU: 0, Pct: 40}}}
	}))
	if !s.Room() || len(s.Bound()) != 0 {
		dump(t, s)
		t.Errorf("layers %+v", s.Layers)
	}
}

// A Summary from samples that went through JSON (a record) is the one
// from the samples themselves.
func TestSummaryFromJSON(t *testing.T) {
	xs := run(6, func(i int) Sample {
		f := sender(uint64(100000*i), 0, 1000)
		u := Flow{Netns: 1, Proto: "udp", Local: "10.0.0.2:5201", Peer: "10.0.0.1:3000", Cookie: 5, Drops: 70, Rcvbuf: 16384}
		ns := healthyNS(1)
		ns.Sockets.UDPInDatagrams, ns.Sockets.UDPRcvbufErrors, ns.Sockets.UDPInErrors = 30, 70, 70
		return Sample{RunPID: 9, Namespaces: []Namespace{ns}, Flows: []Flow{f, u},
			Qdiscs: []Qdisc{{Netns: 1, Iface: "eth0", Kind: "tbf", Handle: "1:", Parent: "root", Rate: 25e6, Bytes: 24e6, Packets: 17000, Overlimits: 500}},
			CPUs:   []CPUWork{{CPU: 1, OtherPct: 70, Top: []ProcWork{{PID: 3, Comm: "yes", Pct: 70}}}}, CPUIntervalS: 1,
			Run:        []RunCPU{{CPU: 1, Pct: 20, WaitPct: 30}},
			Interfaces: []Interface{{Netns: 1, Name: "eth0", Index: 2, Flows: 2}}}
	})
	want := summaryOf(xs)
	var back []Sample
	for _, x := range xs {
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		var y Sample
		if err := json.Unmarshal(b, &y); err != nil {
			t.Fatal(err)
		}
		back = append(back, y)
	}
	got := summaryOf(back)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("from JSON:\n%+v\nfrom samples:\n%+v", got, want)
	}
	if j := got.judgement(LayerSocket, "udp_receive_buffer"); j == nil || !strings.Contains(j.Summary, "dropped 70 % of the datagrams (420 of 600): its 16 KiB buffer") {
		t.Errorf("%+v", j)
	}
}

// The Aggregator keeps sums, not samples: a day of samples with the same
// flows, or with a new flow in each, leaves it the same size.
func TestAggregatorFlat(t *testing.T) {
	a := NewAggregator()
	for i := range 20000 {
		f := sender(0, 0, 0)
		f.Cookie = uint64(i) // a new flow every sample
		a.Add(Sample{IntervalS: 1, Flows: []Flow{f, sender(0, 0, 0)},
			Qdiscs:  []Qdisc{{Netns: 1, Iface: "eth0", Kind: "fq", Handle: "0:", Parent: "root"}},
			Missing: []string{"a source " + string(rune('a'+i%40))}})
	}
	if len(a.flows) != maxAggFlows || len(a.qdiscs) != 1 || len(a.missing) != maxAggMissing || a.dropped != 20000-maxAggFlows {
		t.Errorf("flows %d, qdiscs %d, missing %d, dropped %d", len(a.flows), len(a.qdiscs), len(a.missing), a.dropped)
	}
	if s := a.Summary(); len(s.Flows) > maxSummaryFlows {
		t.Errorf("%d flows in the summary", len(s.Flows))
	}
}

// A flow's span runs from its first to its last interval with traffic,
// the idle intervals between them included.
func TestFlowSpan(t *testing.T) {
	xs := run(8, func(i int) Sample {
		f := sender(0, 0, 0)
		f.BusyUS = 0
		if i != 0 && i != 4 && i != 7 {
			f.BytesSent = 1e6
		} else {
			f.BytesSent = 0
		}
		return Sample{Flows: []Flow{f}}
	})
	s := summaryOf(xs)
	if len(s.Flows) != 1 || s.Flows[0].Seconds != 6 || s.Flows[0].SendMbps != 8*5/6.0 {
		t.Errorf("%+v", s.Flows)
	}
}

// findJ returns the judgement whose subject holds sub.
func findJ(s Summary, sub string) *Judgement {
	for i := range s.Judgements {
		if strings.Contains(s.Judgements[i].Subject, sub) {
			return &s.Judgements[i]
		}
	}
	return nil
}
