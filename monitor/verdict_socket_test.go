package monitor

import (
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/stack"
)

// sndbufSender is the run's one sending flow, 800 Mb/s over a 2 ms RTT,
// busy 90 % of each second and waiting on its own 256 KiB send buffer
// for limited of that time, in a namespace whose tcp_wmem max is wmem.
func sndbufSender(limited float64, wmem int64) func(*stack.Sample) {
	return func(st *stack.Sample) {
		b := *st.Namespaces[0].Buffers
		b.TCPWmem[2] = wmem
		st.Namespaces[0].Buffers = &b
		st.RunPID = 9
		st.Flows = []stack.Flow{{Netns: selfNS, Proto: "tcp", Local: "10.0.0.1:40000", Peer: "10.0.0.2:5201", Cookie: 1, PID: 9, Comm: "iperf3",
			BytesSent: 100e6, BytesAcked: 100e6, BusyUS: 900000, SndbufLimitedUS: uint64(900000 * limited), Timers: true,
			RTTUS: 2000, SndWnd: u32(4 << 20), Sndbuf: 256 << 10}}
	}
}

// A flow that waited on its own send buffer 78 % of its busy time bounds
// the run as run.sndbuf_bound, naming tcp_wmem and the bytes in flight;
// the same flow waiting a fifth of the time, with a 4 MiB tcp_wmem max,
// leaves the stack with room and the limit outside this host.
func TestJudgeSendBufferBindsRun(t *testing.T) {
	samples, limits := vethRun(800, cpuAt(0, 0, 10, 2, 20), cpuAt(1, 0, 3, 2, 5))
	v := judgeStack(samples, limits, withStack(sndbufSender(0.78, 256<<10)))
	wantBound(t, v, BoundTransport)
	if v.Cause == nil || v.Cause.Kind != "send_buffer" || !strings.Contains(v.Summary, "the sending socket's buffer bound this run") ||
		!strings.Contains(v.Summary, "waited on its own send buffer 78 %") || !strings.Contains(v.Summary, "of the 195 KiB the rate × RTT keeps in flight") {
		t.Fatalf("cause %+v: %s", v.Cause, v.Summary)
	}
	f := verdictFindingOf(v)
	if f == nil || f.Code != finding.RunSndbufBound || f.Severity != finding.Warn || !strings.Contains(f.Fix, "net.ipv4.tcp_wmem='4096 16384 1048576'") ||
		f.Evidence["kind"] != "send_buffer" || !strings.Contains(f.Evidence["stack"], "net.ipv4.tcp_wmem max 256 KiB") {
		t.Errorf("finding %+v", f)
	}
	v = judgeStack(samples, limits, withStack(sndbufSender(0.2, 4<<20)))
	wantBound(t, v, BoundOutside)
	for _, f := range v.Findings {
		if f.Code == finding.RunSndbufBound {
			t.Errorf("a send buffer that did not bind: %+v", f)
		}
	}
}

// TCP segments dropped at this host's receiving sockets (each counter the
// stack judges) bind the run as run.socket_drops, in throughput terms;
// counters that do not move leave it outside this host.
func TestJudgeTCPSocketDrops(t *testing.T) {
	samples, limits := vethRun(900, cpuAt(0, 0, 30, 10, 20), cpuAt(1, 0, 5, 10, 10))
	for name, set := range map[string]func(c *stack.SocketCounters){
		"TCPRcvQDrop":       func(c *stack.SocketCounters) { c.TCPRcvQDrop = 3000 },
		"TCPBacklogDrop":    func(c *stack.SocketCounters) { c.TCPBacklogDrop = 3000 },
		"TCPZeroWindowDrop": func(c *stack.SocketCounters) { c.TCPZeroWindowDrop = 3000 },
	} {
		v := judgeStack(samples, limits, withStack(func(st *stack.Sample) {
			st.Namespaces[0].Sockets.TCPInSegs = 97000
			set(st.Namespaces[0].Sockets)
		}))
		wantBound(t, v, BoundSocket)
		if !strings.Contains(v.Summary, "drops at a socket bound this run: receiving sockets dropped 3 % of the TCP segments") ||
			!strings.Contains(v.Summary, "most by "+name) || !strings.Contains(v.Summary, "about 873 Mb/s reached the application") {
			t.Errorf("%s: %s", name, v.Summary)
		}
		if f := verdictFindingOf(v); f == nil || f.Code != finding.RunSocketDrops || !strings.Contains(f.Evidence["stack"], name+" ") {
			t.Errorf("%s: finding %+v", name, f)
		}
	}
	v := judgeStack(samples, limits, withStack(func(st *stack.Sample) { st.Namespaces[0].Sockets.TCPInSegs = 97000 }))
	wantBound(t, v, BoundOutside)
}

// A full accept queue that dropped a sixth of the connection attempts
// binds the run as run.socket_drops, in connections and their wait, with
// no bytes "reached the application"; a few drops in many accepted do
// not.
func TestJudgeListenOverflowBindsRun(t *testing.T) {
	samples, limits := vethRun(200, cpuAt(0, 0, 10, 5, 10), cpuAt(1, 0, 0, 5, 5))
	listen := func(opens, drops uint64) func(*stack.Sample) {
		return func(st *stack.Sample) {
			c := st.Namespaces[0].Sockets
			c.TCPPassiveOpens, c.ListenOverflows, c.ListenDrops = opens, drops, drops
		}
	}
	v := judgeStack(samples, limits, withStack(listen(200, 40)))
	wantBound(t, v, BoundSocket)
	if !strings.Contains(v.Summary, "listening sockets dropped 17 % of the connection attempts") || strings.Contains(v.Summary, "reached the application") {
		t.Errorf("summary: %s", v.Summary)
	}
	if f := verdictFindingOf(v); f == nil || f.Code != finding.RunSocketDrops || !strings.Contains(f.Fix, "somaxconn") {
		t.Errorf("finding %+v", f)
	}
	wantBound(t, judgeStack(samples, limits, withStack(listen(5000, 1))), BoundOutside)
}
