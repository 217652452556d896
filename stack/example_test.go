package stack_test

import (
	"context"
	"fmt"
	"github.com/nicdiag/nicdiag/option"

	"github.com/nicdiag/nicdiag/stack"
)

// A Sampler over a recorded /proc (option.Root): each Read returns the
// interval since the previous one. On the live host, give it the run's
// process (WithProcessTree) or the interfaces watched (WithInterfaces).
func ExampleNewSampler() {
	ctx := context.Background()
	s, err := stack.NewSampler(ctx, option.Root("testdata/vm-6.18"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	x, err := s.Read(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	ns := x.Namespaces[0]
	fmt.Println("tcp_rmem:", ns.Buffers.TCPRmem)
	fmt.Println("conntrack:", ns.Conntrack.Count, "of", ns.Conntrack.Max)
	// Output:
	// tcp_rmem: [4096 131072 33554432]
	// conntrack: 0 of 262144
}

// The Aggregator takes a run's samples one at a time (from a Sampler, or
// decoded from a record) and judges each layer of the stack: here a tbf
// qdisc shaping at 200 Mb/s that the run filled.
func ExampleAggregator() {
	a := stack.NewAggregator()
	for range 5 {
		a.Add(stack.Sample{IntervalS: 1, Qdiscs: []stack.Qdisc{{Iface: "veth0", Kind: "tbf", Handle: "1:", Parent: "root",
			Rate: 25_000_000, Bytes: 24_600_000, Packets: 16500, Overlimits: 9000}}})
	}
	s := a.Summary()
	for _, l := range s.Layers {
		fmt.Println(l.Layer, l.State)
	}
	j := s.Bound()[0]
	fmt.Println(j.Summary)
	fmt.Println(j.Fix)
	// Output:
	// transport not_applicable
	// socket unknown
	// qdisc bound
	// conntrack unknown
	// other_work unknown
	// the tbf 1: on veth0 shapes to 200 Mb/s: the run's traffic through it moved 197 Mb/s, 98 % of that rate, and 45000 packets waited for its tokens
	// tc qdisc change dev veth0 root tbf rate 400mbit burst 500000 latency 50ms, or tc qdisc del dev veth0 root if the shaping is not meant
}

// Room is what a verdict that the limit is outside this host needs:
// every layer read, none bound.
func ExampleSummary_Room() {
	a := stack.NewAggregator()
	a.Add(stack.Sample{IntervalS: 1, Namespaces: []stack.Namespace{{Sockets: &stack.SocketCounters{UDPInDatagrams: 1000, UDPRcvbufErrors: 400, UDPInErrors: 400}}}})
	s := a.Summary()
	fmt.Println(s.Room())
	for _, j := range s.Bound() {
		fmt.Println(j.Summary)
	}
	// Output:
	// false
	// the receiving socket dropped 29 % of the datagrams (400 of 1400): its buffer
}
