package monitor_test

import (
	"fmt"
	"time"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/stack"
)

// Judge a run with this host's stack: a veth sending UDP at 900 Mb/s into
// a receiving socket that dropped 71 % of the datagrams. No ceiling was
// reached; the socket layer bound the run.
func ExampleWindow_AddSample() {
	w := monitor.NewWindow([]monitor.Limits{{NIC: "veth0", Virtual: true, Why: monitor.WhyNamed}})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= 5; i++ {
		x := irq.Sample{Time: t0.Add(time.Duration(i) * time.Second), IntervalS: 1,
			CPUs: []irq.CPURate{{CPU: 0, BusyPct: 40, SoftIRQPct: 30, SystemPct: 10}, {CPU: 1, BusyPct: 20, SystemPct: 20}},
			NICs: []irq.NICRate{{Name: "veth0", TXPacketsPerS: 74_000, TXBytesPerS: 74_000 * 1514}}}
		st := &stack.Sample{Time: x.Time, IntervalS: 1, Namespaces: []stack.Namespace{{ID: 1, ConntrackAbsent: true,
			Sockets: &stack.SocketCounters{UDPInDatagrams: 21_000, UDPRcvbufErrors: 50_000, UDPInErrors: 50_000}}}}
		w.AddSample(monitor.Sample{Sample: x, Stack: st})
	}
	v := w.Verdict()
	fmt.Println(v.Bound, v.Cause.Kind)
	fmt.Println(v.Findings[0].Code, v.Findings[0].Fix[:32])
	// Output:
	// socket udp_receive_buffer
	// run.socket_drops a larger SO_RCVBUF in the receiv
}
