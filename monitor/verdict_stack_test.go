package monitor

import (
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/stack"
)

// The verdict with this host's stack: each layer binds a run built to hit
// it, and leaves a run that does not alone. The stack parts are what
// stack.Sampler writes (their judgement is stack's, tested there); these
// tests are about the verdict's order and words.

const selfNS = 4026531840

// withStack returns st's sample for every sample, made from roomyStack
// and then changed by edit.
func withStack(edit func(st *stack.Sample)) func(int, *irq.Sample) stack.Sample {
	return func(_ int, x *irq.Sample) stack.Sample {
		st := roomyStack(x.IntervalS)
		st.Namespaces[0].ID = selfNS
		edit(&st)
		return st
	}
}

// vethRun is a veth (no device) moving mbps of full-size frames out, on
// two CPUs at the given loads.
func vethRun(mbps float64, cpus ...irq.CPURate) ([]irq.Sample, []Limits) {
	pps := ppsFor(mbps, fullFrame)
	return runOf{cpus: cpus, nics: []irq.NICRate{nicAt("veth0", pps/20, 62, pps, fullBytes)}}.samples(6),
		[]Limits{{NIC: "veth0", Virtual: true, MTU: 1500, Why: WhyNamed}}
}

// tbf is a tbf on veth0 at rateMbps that carried mbps of full-size
// frames, holding held of its packets back.
func tbf(rateMbps, mbps, held float64) stack.Qdisc {
	pps := ppsFor(mbps, fullFrame)
	return stack.Qdisc{Netns: selfNS, Iface: "veth0", Kind: "tbf", Handle: "1:", Parent: "root", Rate: uint64(rateMbps * 1e6 / 8),
		Bytes: uint64(pps * fullBytes), Packets: uint64(pps), Overlimits: uint64(pps * held)}
}

func TestJudgeShaper(t *testing.T) {
	samples, limits := vethRun(196, cpuAt(0, 0, 8, 2, 10), cpuAt(1, 0, 0, 5, 5))
	v := judgeStack(samples, limits, withStack(func(st *stack.Sample) { st.Qdiscs = []stack.Qdisc{tbf(200, 196, 0.2)} }))
	wantBound(t, v, BoundQdisc)
	if v.Limit == nil || v.Limit.What != "the tbf 1: on veth0 shaping to 200 Mb/s" || !near(v.Limit.Share, 196.0*fullBytes/fullFrame/200, 0.01) ||
		!strings.Contains(v.Summary, "the shaper bound this run") {
		t.Errorf("limit %+v: %s", v.Limit, v.Summary)
	}
	if f := verdictFindingOf(v); f == nil || !strings.Contains(f.Fix, "tc qdisc change dev veth0 root tbf rate 400mbit") {
		t.Errorf("fix %+v", f)
	}
	// The load generator's control connection crossed the shaper two
	// samples before its data: the stack counts the qdisc from there, the
	// verdict over the run's span, as the NIC.
	idle := runOf{cpus: []irq.CPURate{cpuAt(0, 0, 1, 1, 1), cpuAt(1, 0, 0, 1, 1)}, nics: []irq.NICRate{nicAt("veth0", 5, 62, 5, 200)}}.samples(2)
	late := judgeStack(concat(idle, samples), limits, func(i int, x *irq.Sample) stack.Sample {
		st := roomyStack(x.IntervalS)
		st.Namespaces[0].ID = selfNS
		st.Qdiscs = []stack.Qdisc{tbf(200, 196, 0.2)}
		if i < 2 {
			st.Qdiscs[0].Bytes, st.Qdiscs[0].Packets, st.Qdiscs[0].Overlimits = 1000, 5, 0
		}
		return st
	})
	wantBound(t, late, BoundQdisc)
	if late.Limit == nil || !near(late.Limit.Share, v.Limit.Share, 1e-3) {
		t.Errorf("with the control connection before: limit %+v, want the share %v", late.Limit, v.Limit.Share)
	}
	// A shaper that held packets back at 80 % of its rate binds the run
	// though a CPU the run's own packet work filled reads 100 %.
	samples, limits = vethRun(160, cpuAt(0, 0, 95, 0, 5), cpuAt(1, 0, 0, 5, 5))
	v = judgeStack(samples, limits, withStack(func(st *stack.Sample) { st.Qdiscs = []stack.Qdisc{tbf(200, 160, 0.3)} }))
	wantBound(t, v, BoundQdisc)
	// The same run through a 1 Gb/s tbf: the core bound it.
	v = judgeStack(samples, limits, withStack(func(st *stack.Sample) { st.Qdiscs = []stack.Qdisc{tbf(1000, 160, 0)} }))
	wantBound(t, v, BoundCore)
	// 50 Mb/s through it: nothing bound the run, the stack had room.
	samples, limits = vethRun(50, cpuAt(0, 0, 5, 2, 3), cpuAt(1, 0, 0, 2, 3))
	v = judgeStack(samples, limits, withStack(func(st *stack.Sample) { st.Qdiscs = []stack.Qdisc{tbf(1000, 50, 0)} }))
	wantBound(t, v, BoundOutside)
	if c := ceilingOf(v, BoundQdisc); c == nil || !near(c.Share, 0.05*fullBytes/fullFrame, 0.005) {
		t.Errorf("qdisc ceiling %+v", c)
	}
}

// rwndSender is the run's sending flow stalled on the receive window
// rwnd of its busy time; its receiving end, in the server's namespace 2
// with a tcp_rmem max of rmem, is a flow of the run too.
func rwndSender(rwnd float64, rmem uint32) func(*stack.Sample) {
	return func(st *stack.Sample) {
		srv := st.Namespaces[0]
		srv.ID = 2
		b := *srv.Buffers
		b.TCPRmem[2] = int64(rmem)
		srv.Buffers = &b
		st.Namespaces = append(st.Namespaces, srv)
		st.RunPID = 9
		st.Flows = []stack.Flow{
			{Netns: selfNS, Proto: "tcp", Local: "10.0.0.1:40000", Peer: "10.0.0.2:5201", Cookie: 1, PID: 9, Comm: "iperf3",
				BytesSent: 800e6, BytesAcked: 800e6, BusyUS: 900000, RwndLimitedUS: uint64(900000 * rwnd), Timers: true, RTTUS: 40, Sndbuf: 1 << 20},
			{Netns: 2, Proto: "tcp", Local: "10.0.0.2:5201", Peer: "10.0.0.1:40000", Cookie: 2, PID: 10, Comm: "iperf3",
				BytesReceived: 800e6, Timers: true, RcvRTTUS: 40, Rcvbuf: rmem},
		}
	}
}

func TestJudgeLocalWindow(t *testing.T) {
	// The command's thread fills CPU 0 (97 %): a flow that waited on its
	// window did not wait on the CPU; the window bound the run.
	samples, limits := vethRun(6400, cpuAt(0, 0, 20, 2, 75), cpuAt(1, 0, 3, 2, 5))
	for i := range samples {
		samples[i].Threads = []irq.ThreadRate{{PID: 9, TID: 9, Comm: "iperf3", UserPct: 2, SystemPct: 70, CPU: 0}}
	}
	v := judgeStack(samples, limits, withStack(rwndSender(0.6, 64<<10)))
	wantBound(t, v, BoundTransport)
	if v.Cause == nil || v.Cause.Kind != "local_window" || !strings.Contains(v.Summary, "net.ipv4.tcp_rmem's max, 64 KiB") ||
		!strings.Contains(v.Summary, "in flight") || !strings.Contains(v.Summary, "this host's receive window bound this run") {
		t.Errorf("cause %+v: %s", v.Cause, v.Summary)
	}
	if f := verdictFindingOf(v); f == nil || f.Code != finding.RunWindowBound || !strings.Contains(f.Fix, "net.ipv4.tcp_rmem='4096 131072 262144'") {
		t.Errorf("finding %+v", f)
	}
	// Stalled a fifth of the time, into a 6 MiB buffer: the window did
	// not bind; the command did.
	v = judgeStack(samples, limits, withStack(rwndSender(0.2, 6<<20)))
	wantBound(t, v, BoundCommand)
}

func TestJudgePeerWindowIsOutside(t *testing.T) {
	samples, limits := vethRun(300, cpuAt(0, 0, 5, 2, 5), cpuAt(1, 0, 0, 2, 3))
	v := judgeStack(samples, limits, withStack(func(st *stack.Sample) {
		st.RunPID = 9
		st.Flows = []stack.Flow{{Netns: selfNS, Proto: "tcp", Local: "10.0.0.1:40000", Peer: "192.0.2.9:5201", Cookie: 1, PID: 9, Comm: "iperf3",
			BytesSent: 37.5e6, BytesAcked: 37.5e6, BusyUS: 950000, RwndLimitedUS: 900000, Timers: true, RTTUS: 40000, SndWnd: u32(1 << 20)}}
	}))
	wantBound(t, v, BoundOutside)
	if !strings.Contains(v.Summary, "its stack had room") || !strings.Contains(v.Summary, "the peer's receive window") {
		t.Errorf("summary: %s", v.Summary)
	}
}

func u32(v uint32) *uint32 { return &v }

func TestJudgeSocketDrops(t *testing.T) {
	samples, limits := vethRun(900, cpuAt(0, 0, 30, 10, 40), cpuAt(1, 0, 5, 30, 20))
	drops := func(lost uint64) func(*stack.Sample) {
		return func(st *stack.Sample) {
			c := st.Namespaces[0].Sockets
			c.UDPInDatagrams, c.UDPRcvbufErrors, c.UDPInErrors = 70_000-lost, lost, lost
			st.RunPID = 9
			st.Flows = []stack.Flow{{Netns: selfNS, Proto: "udp", State: "close", Local: "10.0.0.2:5201", Cookie: 3, PID: 10, Comm: "iperf3",
				Drops: lost, Rcvbuf: 16 << 10}}
		}
	}
	v := judgeStack(samples, limits, withStack(drops(50_000)))
	wantBound(t, v, BoundSocket)
	if !strings.Contains(v.Summary, "dropped 71 % of the datagrams") || !strings.Contains(v.Summary, "16 KiB buffer") ||
		!strings.Contains(v.Summary, "about 257 Mb/s reached the application") {
		t.Errorf("summary: %s", v.Summary)
	}
	if f := verdictFindingOf(v); f == nil || f.Code != finding.RunSocketDrops || !strings.Contains(f.Fix, "iperf3 -w") || !strings.Contains(f.Fix, "net.core.rmem_max=") {
		t.Errorf("finding %+v", f)
	}
	v = judgeStack(samples, limits, withStack(drops(0)))
	wantBound(t, v, BoundOutside)
}

func TestJudgeConntrack(t *testing.T) {
	samples, limits := vethRun(300, cpuAt(0, 0, 10, 5, 10), cpuAt(1, 0, 0, 5, 5))
	table := func(count int64, drop uint64) func(*stack.Sample) {
		return func(st *stack.Sample) {
			st.Namespaces[0].ConntrackAbsent = false
			st.Namespaces[0].Conntrack = &stack.Conntrack{Count: count, Max: 262144, Drop: drop, StatsKnown: true}
		}
	}
	v := judgeStack(samples, limits, withStack(table(262144, 400)))
	wantBound(t, v, BoundConntrack)
	if f := verdictFindingOf(v); f == nil || f.Code != finding.RunConntrackDrops || !strings.Contains(f.Fix, "nf_conntrack_max=524288") {
		t.Errorf("finding %+v", f)
	}
	// Full, but nothing dropped: listed by the stack, not bound.
	wantBound(t, judgeStack(samples, limits, withStack(table(262000, 0))), BoundOutside)
}

func TestJudgeOtherWork(t *testing.T) {
	yes := func(st *stack.Sample) {
		st.RunPID = 9
		st.CPUIntervalS = st.IntervalS
		st.CPUs = []stack.CPUWork{{CPU: 0, OtherPct: 50, Top: []stack.ProcWork{{PID: 77, Comm: "yes", Pct: 50}}},
			{CPU: 1, OtherPct: 48, Top: []stack.ProcWork{{PID: 78, Comm: "yes", Pct: 48}}}}
		st.Run = []stack.RunCPU{{CPU: 0, Pct: 40, WaitPct: 45}, {CPU: 1, Pct: 10, WaitPct: 30}}
	}
	// Both CPUs full: the run's work (softirq, its threads) and a yes on
	// each. Other work, naming yes; never core, never outside.
	samples, limits := vethRun(3000, cpuAt(0, 0, 10, 45, 45), cpuAt(1, 0, 2, 50, 48))
	for i := range samples {
		samples[i].Threads = []irq.ThreadRate{{PID: 9, TID: 9, Comm: "iperf3", UserPct: 2, SystemPct: 38, CPU: 0}}
	}
	v := judgeStack(samples, limits, withStack(yes))
	wantBound(t, v, BoundOtherWork)
	if !strings.Contains(v.Summary, "yes (PID 7") {
		t.Errorf("summary names no yes: %s", v.Summary)
	}
	if f := verdictFindingOf(v); f == nil || f.Code != finding.RunOtherWork || !strings.Contains(f.Fix, "taskset") {
		t.Errorf("finding %+v", f)
	}
	// A paced run (a fifth of a CPU wanted, waits included) on a CPU
	// others kept full got what it asked for: nothing here bound it.
	samples, limits = vethRun(300, cpuAt(0, 0, 3, 30, 62), cpuAt(1, 0, 12, 40, 45))
	v = judgeStack(samples, limits, withStack(func(st *stack.Sample) {
		yes(st)
		st.Run = []stack.RunCPU{{CPU: 1, Pct: 5, WaitPct: 15}}
	}))
	wantBound(t, v, BoundOutside)
	// A core of packet work at 95 % beside a yes at 5 %: the core.
	samples, limits = vethRun(3000, cpuAt(0, 5, 85, 5, 0), cpuAt(1, 0, 0, 10, 5))
	v = judgeStack(samples, limits, withStack(func(st *stack.Sample) {
		st.CPUIntervalS = st.IntervalS
		st.CPUs = []stack.CPUWork{{CPU: 0, OtherPct: 5, Top: []stack.ProcWork{{PID: 77, Comm: "yes", Pct: 5}}}}
	}))
	wantBound(t, v, BoundCore)
	// Steal as large as the packet work on the full core: other work.
	hot := cpuAt(0, 0, 45, 0, 5)
	hot.StealPct, hot.IdlePct = 50, 0
	samples, limits = vethRun(2000, hot, cpuAt(1, 0, 0, 2, 3))
	v = judgeStack(samples, limits, withStack(func(*stack.Sample) {}))
	wantBound(t, v, BoundOtherWork)
	if v.Cause.Kind != "steal" || !strings.Contains(v.Summary, "50 % steal") || !strings.Contains(verdictFindingOf(v).Fix, "dedicated CPUs") {
		t.Errorf("steal: %+v: %s", v.Cause, v.Summary)
	}
}

func TestJudgeUnreadStackIsUnknown(t *testing.T) {
	samples, limits := vethRun(300, cpuAt(0, 0, 10, 5, 10), cpuAt(1, 0, 0, 5, 5))
	// No stack at all: nothing read was near its limit, but the stack
	// was not read: unknown, naming it, never outside_host.
	v := Judge(samples, limits)
	wantBound(t, v, BoundUnknown)
	if !strings.Contains(v.Summary, "this host's stack (transport, sockets, qdiscs, conntrack, other work) could not be read") {
		t.Errorf("summary: %s", v.Summary)
	}
	if f := verdictFindingOf(v); f == nil || f.Severity != finding.Info || !strings.Contains(f.Fix, "nicdiag monitor -- CMD") {
		t.Errorf("finding %+v", f)
	}
	// sock_diag unreadable: the transport is unknown, and so the verdict.
	v = judgeStack(samples, limits, withStack(func(st *stack.Sample) {
		st.Missing = []string{"sock_diag in network namespace 4026531840: operation not permitted"}
	}))
	wantBound(t, v, BoundUnknown)
	if !strings.Contains(v.Summary, "the transport layer (sock_diag") {
		t.Errorf("summary: %s", v.Summary)
	}
}

func TestJudgeOneQueue(t *testing.T) {
	queues := func(shares ...float64) []irq.QueueRate {
		var out []irq.QueueRate
		for i, s := range shares {
			rx, tx := 400_000*s, 1000.0
			out = append(out, irq.QueueRate{IRQ: 40 + i, Kind: irq.KindTxRx, Index: i, CPU: i, IRQsPerS: 30_000 * s, RXPacketsPerS: &rx, TXPacketsPerS: &tx})
		}
		return out
	}
	run := func(qs []irq.QueueRate) Verdict {
		n := nicAt("eth0", 400_000, fullBytes, 100_000, 62)
		n.Queues = qs
		cpus := []irq.CPURate{cpuAt(0, 5, 93, 0, 1), cpuAt(1, 0, 10, 0, 1), cpuAt(2, 0, 10, 0, 1), cpuAt(3, 0, 10, 0, 1)}
		return judgeRoom(runOf{cpus: cpus, nics: []irq.NICRate{n}}.samples(6),
			[]Limits{{NIC: "eth0", PortMbps: 10_000, Address: "0000:01:00.0", MTU: 1500}})
	}
	v := run(queues(0.97, 0.01, 0.01, 0.01))
	wantBound(t, v, BoundCore)
	f := oneFinding(t, v, finding.RunOneQueue)
	if !strings.Contains(f.Summary, "queue 0 of eth0's 4 carried 97 % of its packets") || f.Severity != finding.Warn {
		t.Errorf("one queue: %+v", f)
	}
	if core := verdictFindingOf(v); !strings.Contains(core.Fix, "iperf3 -P 4") || !strings.Contains(core.Fix, "ethtool -N eth0 rx-flow-hash") ||
		strings.Contains(core.Fix, "Spread the packet work") {
		t.Errorf("core fix: %s", core.Fix)
	}
	mtu := oneFinding(t, v, finding.RunSmallMTU)
	if !strings.Contains(mtu.Fix, "ip link set dev eth0 mtu 9000") {
		t.Errorf("mtu: %+v", mtu)
	}
	// Spread over four queues: no one queue; more queues are the fix.
	v = run(queues(0.4, 0.2, 0.2, 0.2))
	wantBound(t, v, BoundCore)
	if len(findingsOf(v, finding.RunOneQueue)) != 0 || !strings.Contains(verdictFindingOf(v).Fix, "more queues") {
		t.Errorf("spread: %v", v.Findings)
	}
}

// TestJudgeSoftwareBesideDevice: a veth beside a NIC that moved the same
// traffic is sampled, not judged; with the NIC idle, the veth is judged.
func TestJudgeSoftwareBesideDevice(t *testing.T) {
	pps := ppsFor(500, fullFrame)
	limits := []Limits{{NIC: "eth0", PortMbps: 1000, Address: "0000:01:00.0", Why: WhyPhysical}, {NIC: "veth0", Virtual: true, Why: WhyRouted}}
	both := runOf{cpus: idleCPUs(0, 1), nics: []irq.NICRate{nicAt("eth0", 10, 62, pps, fullBytes), nicAt("veth0", 10, 62, pps, fullBytes)}}.samples(5)
	v := judgeRoom(both, limits)
	if names := v.nicsJudged(); len(names) != 1 || names[0] != "eth0" || !strings.HasPrefix(v.Summary, "eth0 moved") {
		t.Errorf("judged %v: %s", names, v.Summary)
	}
	idle := runOf{cpus: idleCPUs(0, 1), nics: []irq.NICRate{nicAt("eth0", 2, 62, 2, 62), nicAt("veth0", 10, 62, pps, fullBytes)}}.samples(5)
	v = judgeRoom(idle, limits)
	if names := v.nicsJudged(); len(names) != 1 || names[0] != "veth0" || !strings.Contains(verdictFindingOf(v).Evidence["interfaces"], "veth0 (the command's flows leave by it)") {
		t.Errorf("judged %v: %v", names, verdictFindingOf(v).Evidence)
	}
}

// nicsJudged lists the interfaces the verdict judged.
func (v Verdict) nicsJudged() []string {
	var out []string
	for _, w := range v.Watched {
		if w.Judged {
			out = append(out, w.NIC)
		}
	}
	return out
}
