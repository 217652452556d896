package nicdiag_test

import (
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/stack"
)

// Recorded runs of counters no virtual driver fills: a NIC's per-queue
// traffic with one flow on one queue of eight, and a conntrack table
// that filled. They join fieldRuns (testdata/runs).
func init() {
	fieldRuns = append(fieldRuns, oneQueueRun, conntrackFullRun)
}

// roomyStack is this host's stack with room in every layer, as a quiet
// host reads: its namespace's counters without a drop, the default buffer
// sysctls, no conntrack module, the NIC's default qdisc without a rate,
// one TCP flow receiving with a buffer far larger than its rate × RTT. No
// process tree is watched (a run without a command).
func roomyStack(int) *stack.Sample {
	return &stack.Sample{
		Namespaces: []stack.Namespace{{ID: 4026531840,
			Sockets: &stack.SocketCounters{TCPInSegs: 230_900, TCPOutSegs: 115_000},
			Buffers: &stack.Buffers{TCPRmem: [3]int64{4096, 131072, 6291456}, TCPWmem: [3]int64{4096, 16384, 4194304},
				RmemMax: 212992, WmemMax: 212992, RmemDefault: 212992, WmemDefault: 212992},
			ConntrackAbsent: true}},
		Flows: []stack.Flow{{Netns: 4026531840, Proto: "tcp", State: "established", Local: "192.0.2.10:5201", Peer: "198.51.100.7:41236",
			Cookie: 1, Inode: 91823, BytesReceived: 350_000_000, SegsIn: 230_900, SegsOut: 115_000, RTTUS: 600, RcvRTTUS: 500,
			Timers: true, Rcvbuf: 6 << 20, RcvSpace: 1 << 20, Cwnd: 10, SndMSS: 1448}},
		Qdiscs: []stack.Qdisc{{Netns: 4026531840, Iface: "enp1s0f0", Kind: "fq_codel", Handle: "0:", Parent: "root", Bytes: 7_590_000, Packets: 115_000}},
	}
}

// oneQueueRun: one TCP flow into the X722's eno1 (8 combined queues, one
// per CPU): the flow hashes to queue 3, whose interrupts CPU 3 takes, and
// that core is full of packet work while the other seven idle. The core
// bound the run, and the fix is more flows (or a hash over their ports),
// not more queues; the frames are of a 1500-byte MTU.
var oneQueueRun = runCase{
	name:     "x722-one-flow-one-queue",
	snapshot: "x722-lewisburg",
	origin: "a single TCP stream received on the X722's eno1 (i40e, 8 combined queues, 8 CPUs); reconstructed as 477,600 frames/s " +
		"of 1518 bytes (5.8 Gb/s) in, ACKs out, 97 % of the packets on queue 3 (IRQ 41, taken by CPU 3) and about 2000/s on each " +
		"other queue, CPU 3 at 8 % irq and 90 % softirq, the receiving iperf3 on CPU 5; per-queue packets as i40e's ethtool -S " +
		"rx-N.packets would count them; this host's stack with room (roomyStack)",
	nics:      []nicLoad{{name: "eno1", rxPPS: 477_600, rxBytes: 1514, txPPS: 120_000, txBytes: 66, queues: eightQueues(3, 477_600-7*2_000, 2_000)}},
	cpus:      []cpuLoad{{system: 1}, {system: 1}, {system: 1}, {irq: 8, softirq: 90, system: 1}, {system: 1}, {user: 10, system: 45}, {system: 1}, {system: 1}},
	stack:     roomyStack,
	want:      monitor.BoundCore,
	wantText:  []string{"CPU 3 was", "that core bound this run"},
	wantCodes: []finding.Code{finding.RunOneQueue, finding.RunSmallMTU},
}

// eightQueues are eno1's eight TxRx vectors (IRQs 38 to 45, queue i on
// CPU i): queue hot carries hotPPS received packets, the others each.
func eightQueues(hot int, hotPPS, each float64) []irq.QueueRate {
	var out []irq.QueueRate
	for i := range 8 {
		rx, irqs := each, 300.0
		if i == hot {
			rx, irqs = hotPPS, 40_000
		}
		tx := 15_000.0
		out = append(out, irq.QueueRate{IRQ: 38 + i, Action: "i40e-eno1-TxRx-" + string(rune('0'+i)), Kind: irq.KindTxRx, Index: i,
			IRQsPerS: irqs, CPU: i, RXPacketsPerS: &rx, TXPacketsPerS: &tx})
	}
	return out
}

// conntrackFullRun: a web server on the OptiPlex's eno1 taking short
// connections, its conntrack table full: the table refuses new entries
// and drops their packets ("nf_conntrack: table full, dropping
// packet"). The stack's conntrack layer bound the run.
var conntrackFullRun = runCase{
	name:     "i219-conntrack-full",
	snapshot: "i219-optiplex",
	origin: "a web server on the OptiPlex's eno1 under a connection-rate load, its conntrack table full; reconstructed as " +
		"60,000 frames/s of 300 bytes in and 60,000 of 800 out, the 4 CPUs a third busy; the table at its nf_conntrack_max " +
		"262144 (the development VM's) with drop 412, early_drop 3072 and insert_failed 12 a second, as " +
		"stack/testdata/conntrack-full's readings count them",
	nics: []nicLoad{{name: "eno1", rxPPS: 60_000, rxBytes: 296, txPPS: 60_000, txBytes: 796}},
	cpus: []cpuLoad{{irq: 2, softirq: 20, user: 5, system: 8}, {user: 15, system: 15}, {user: 14, system: 14}, {user: 15, system: 16}},
	stack: func(int) *stack.Sample {
		return &stack.Sample{Namespaces: []stack.Namespace{{ID: 4026531840,
			Sockets: &stack.SocketCounters{TCPInSegs: 60_000, TCPOutSegs: 60_000},
			Buffers: &stack.Buffers{TCPRmem: [3]int64{4096, 131072, 6291456}, TCPWmem: [3]int64{4096, 16384, 4194304},
				RmemMax: 212992, WmemMax: 212992, RmemDefault: 212992, WmemDefault: 212992},
			Conntrack: &stack.Conntrack{Count: 262144, Max: 262144, Found: 1200, Insert: 9000, InsertFailed: 12, Drop: 412,
				EarlyDrop: 3072, StatsKnown: true}}}}
	},
	want:     monitor.BoundConntrack,
	wantText: []string{"the connection tracking table bound this run", "262144", "table full, dropping packet"},
}
