package stack

import "time"

// Sample is this host's network stack over one interval: what each source
// counted between two readings, and the state at the second. Counts are
// per interval, not per second (IntervalS converts them). The JSON field
// names are a stable contract: a monitored run's record carries Samples.
type Sample struct {
	Time      time.Time `json:"time"`
	IntervalS float64   `json:"interval_s"`
	// Namespaces are the network namespaces read: the run's processes'
	// (WithProcessTree), WithNetns's, or the caller's.
	Namespaces []Namespace `json:"namespaces,omitempty"`
	// Flows are the run's sockets, the busiest first (at most MaxFlows);
	// FlowsOmitted counts those left out.
	Flows        []Flow `json:"flows,omitempty"`
	FlowsOmitted int    `json:"flows_omitted,omitempty"`
	// Qdiscs are the qdiscs and classes of the interfaces watched.
	Qdiscs []Qdisc `json:"qdiscs,omitempty"`
	// CPUs is the work of processes on each CPU over the CPUIntervalS
	// seconds since the previous process scan; empty in a sample no scan
	// ended in (WithScanEvery).
	CPUs         []CPUWork `json:"cpus,omitempty"`
	CPUIntervalS float64   `json:"cpu_interval_s,omitempty"`
	// Run is the work of the run's threads on each CPU over the interval
	// (read at every reading; empty without a process tree).
	Run []RunCPU `json:"run,omitempty"`
	// Interfaces are those the flows route through (a route lookup of each
	// flow's peer in its namespace), with the flows on each.
	Interfaces []Interface `json:"interfaces,omitempty"`
	// RunPID is the root of the run's process tree (WithProcessTree,
	// Watch); 0 when none is watched: every process is then other work.
	RunPID int `json:"run_pid,omitempty"`
	// Missing names what could not be read this interval.
	Missing []string `json:"missing,omitempty"`
}

// Namespace is one network namespace's socket layer, buffer limits and
// conntrack over the interval.
type Namespace struct {
	// ID is the namespace's inode number (readlink /proc/PID/ns/net:
	// "net:[ID]"); 0 under a root, where there is one.
	ID uint64 `json:"id"`
	// Path is the file the namespace was opened by: "/proc/PID/ns/net",
	// WithNetns's path, or "" for the caller's namespace.
	Path string `json:"path,omitempty"`
	// Sockets are the counts of the interval; nil in the first interval a
	// namespace is seen and when its files could not be read.
	Sockets *SocketCounters `json:"sockets,omitempty"`
	// Buffers are the buffer sysctls at the reading.
	Buffers *Buffers `json:"buffers,omitempty"`
	// Conntrack is nil where the kernel has no conntrack
	// (ConntrackAbsent) or it could not be read.
	Conntrack       *Conntrack `json:"conntrack,omitempty"`
	ConntrackAbsent bool       `json:"conntrack_absent,omitempty"`
}

// SocketCounters are the socket layer's counts over an interval, from
// /proc/net/snmp (Udp, Tcp), /proc/net/snmp6 (Udp6, added to the Udp
// counts) and /proc/net/netstat (TcpExt). UDPInErrors includes
// UDPRcvbufErrors: a datagram dropped for a full receive buffer is counted
// in both.
type SocketCounters struct {
	UDPInDatagrams  uint64 `json:"udp_in_datagrams,omitempty"`
	UDPOutDatagrams uint64 `json:"udp_out_datagrams,omitempty"`
	UDPNoPorts      uint64 `json:"udp_no_ports,omitempty"`
	UDPInErrors     uint64 `json:"udp_in_errors,omitempty"`
	UDPRcvbufErrors uint64 `json:"udp_rcvbuf_errors,omitempty"`
	UDPSndbufErrors uint64 `json:"udp_sndbuf_errors,omitempty"`
	UDPMemErrors    uint64 `json:"udp_mem_errors,omitempty"`
	TCPInSegs       uint64 `json:"tcp_in_segs,omitempty"`
	TCPOutSegs      uint64 `json:"tcp_out_segs,omitempty"`
	TCPRetransSegs  uint64 `json:"tcp_retrans_segs,omitempty"`
	// TCPPassiveOpens: connections a listening socket accepted (Tcp
	// PassiveOpens), against which ListenDrops are judged.
	TCPPassiveOpens uint64 `json:"tcp_passive_opens,omitempty"`
	// TCPRcvQDrop: segments dropped because the receive queue was over
	// the socket's buffer; TCPBacklogDrop: because the backlog of a socket
	// owned by its process was full; TCPZeroWindowDrop: data beyond a zero
	// window; TCPOFODrop: out-of-order segments dropped for memory;
	// PruneCalled/RcvPruned: the receive queue pruned (and dropped) for
	// memory; ListenOverflows/ListenDrops: connections a full accept queue
	// refused.
	TCPRcvQDrop        uint64 `json:"tcp_rcvq_drop,omitempty"`
	TCPBacklogDrop     uint64 `json:"tcp_backlog_drop,omitempty"`
	TCPZeroWindowDrop  uint64 `json:"tcp_zero_window_drop,omitempty"`
	TCPOFODrop         uint64 `json:"tcp_ofo_drop,omitempty"`
	PruneCalled        uint64 `json:"prune_called,omitempty"`
	RcvPruned          uint64 `json:"rcv_pruned,omitempty"`
	ListenOverflows    uint64 `json:"listen_overflows,omitempty"`
	ListenDrops        uint64 `json:"listen_drops,omitempty"`
	TCPMemoryPressures uint64 `json:"tcp_memory_pressures,omitempty"`
}

// Buffers are a namespace's socket buffer sysctls, in bytes (0: unread).
// tcp_rmem and tcp_wmem are per namespace (Linux 4.15+); rmem_max and
// wmem_max, which cap SO_RCVBUF and SO_SNDBUF, are the host's.
type Buffers struct {
	TCPRmem     [3]int64 `json:"tcp_rmem"` // min, default, max
	TCPWmem     [3]int64 `json:"tcp_wmem"`
	RmemMax     int64    `json:"rmem_max"`
	WmemMax     int64    `json:"wmem_max"`
	RmemDefault int64    `json:"rmem_default"`
	WmemDefault int64    `json:"wmem_default"`
}

// Conntrack is a namespace's connection tracking table: its fill at the
// reading and the statistics of /proc/net/stat/nf_conntrack (summed over
// CPUs) counted over the interval.
type Conntrack struct {
	Count int64 `json:"count"`
	// Max is net.netfilter.nf_conntrack_max (the host's; set in the
	// initial namespace).
	Max          int64  `json:"max"`
	Found        uint64 `json:"found,omitempty"`
	Invalid      uint64 `json:"invalid,omitempty"`
	Insert       uint64 `json:"insert,omitempty"`
	InsertFailed uint64 `json:"insert_failed,omitempty"`
	Drop         uint64 `json:"drop,omitempty"`
	EarlyDrop    uint64 `json:"early_drop,omitempty"`
	// StatsKnown is false when /proc/net/stat/nf_conntrack was not read
	// (the first interval, or unreadable): the counts are then 0.
	StatsKnown bool `json:"stats_known"`
}

// Flow is one socket of the run over the interval. Counts are of the
// interval (since the socket opened when First); the rest is its state at
// the reading. UDP sockets carry their addresses, buffers and drops.
type Flow struct {
	Netns  uint64 `json:"netns"`
	Proto  string `json:"proto"` // "tcp" or "udp"
	State  string `json:"state"` // "established", "close" (an unconnected UDP socket), ...
	Local  string `json:"local"` // "10.0.0.1:5201", "[fe80::1]:5201"
	Peer   string `json:"peer"`
	Cookie uint64 `json:"cookie"`
	Inode  uint32 `json:"inode"`
	// PID and Comm: a process of the run holding the socket (0 and ""
	// when the flow was matched by address).
	PID  int    `json:"pid,omitempty"`
	Comm string `json:"comm,omitempty"`
	// Iface is the interface the flow leaves by: the socket's bound
	// device, else the route to its peer ("" when unknown).
	Iface string `json:"iface,omitempty"`
	// First: the socket was first seen in this interval.
	First bool `json:"first,omitempty"`

	BytesSent     uint64 `json:"bytes_sent,omitempty"`
	BytesRetrans  uint64 `json:"bytes_retrans,omitempty"`
	BytesAcked    uint64 `json:"bytes_acked,omitempty"`
	BytesReceived uint64 `json:"bytes_received,omitempty"`
	SegsOut       uint64 `json:"segs_out,omitempty"`
	SegsIn        uint64 `json:"segs_in,omitempty"`
	// Retransmits are segments retransmitted (tcpi_total_retrans).
	Retransmits uint64 `json:"retransmits,omitempty"`
	// BusyUS is the time the flow had data to send (tcpi_busy_time, µs),
	// RwndLimitedUS and SndbufLimitedUS the parts of it stalled by the
	// peer's receive window and by this socket's send buffer. Timers is
	// false when the kernel does not report them (before Linux 4.10).
	BusyUS          uint64 `json:"busy_us,omitempty"`
	RwndLimitedUS   uint64 `json:"rwnd_limited_us,omitempty"`
	SndbufLimitedUS uint64 `json:"sndbuf_limited_us,omitempty"`
	Timers          bool   `json:"timers"`
	// Drops are packets the socket dropped (SK_MEMINFO_DROPS).
	Drops uint64 `json:"drops,omitempty"`

	RTTUS    uint32 `json:"rtt_us,omitempty"`
	MinRTTUS uint32 `json:"min_rtt_us,omitempty"`
	// RcvRTTUS is the receiver's own RTT estimate (tcpi_rcv_rtt), what a
	// flow that only receives has.
	RcvRTTUS uint32 `json:"rcv_rtt_us,omitempty"`
	Cwnd     uint32 `json:"cwnd,omitempty"` // segments
	SndMSS   uint32 `json:"snd_mss,omitempty"`
	// DeliveryRate is the kernel's latest delivery rate sample, in bytes
	// per second; AppLimited when it was taken while the application had
	// nothing to send.
	DeliveryRate uint64 `json:"delivery_rate,omitempty"`
	AppLimited   bool   `json:"app_limited,omitempty"`
	// SndWnd is the receive window the peer advertised (Linux 5.4+),
	// RcvWnd the one this socket advertised (Linux 6.2+); nil where the
	// kernel does not report it.
	SndWnd *uint32 `json:"snd_wnd,omitempty"`
	RcvWnd *uint32 `json:"rcv_wnd,omitempty"`
	// RcvSpace is the receive buffer autotuning's estimate of what the
	// flow needs in a round trip (tcpi_rcv_space).
	RcvSpace uint32 `json:"rcv_space,omitempty"`
	// Rcvbuf and Sndbuf are the socket's buffer sizes (sk_rcvbuf,
	// sk_sndbuf: what autotuning grew them to, or twice an SO_RCVBUF /
	// SO_SNDBUF); RmemAlloc and WmemQueued what was in them.
	Rcvbuf     uint32 `json:"rcvbuf,omitempty"`
	Sndbuf     uint32 `json:"sndbuf,omitempty"`
	RmemAlloc  uint32 `json:"rmem_alloc,omitempty"`
	WmemQueued uint32 `json:"wmem_queued,omitempty"`
}

// Qdisc is one qdisc or class of a watched interface over the interval.
type Qdisc struct {
	Netns  uint64 `json:"netns"`
	Iface  string `json:"iface"`
	Kind   string `json:"kind"`   // "tbf", "htb", "fq", "cake", "pfifo_fast", ...
	Handle string `json:"handle"` // "1:" (a qdisc), "1:10" (a class)
	Parent string `json:"parent"` // "root", "ingress", "1:"
	Class  bool   `json:"class,omitempty"`
	// Rate is a shaper's configured rate in bytes per second: tbf's rate,
	// an htb class's rate, cake's bandwidth, fq's flow maxrate; Ceil an
	// htb class's ceil. 0: none.
	Rate uint64 `json:"rate,omitempty"`
	Ceil uint64 `json:"ceil,omitempty"`
	// First: first seen in this interval (its counts are then 0).
	First bool `json:"first,omitempty"`
	// Bytes and Packets it sent, Drops, Overlimits (packets held back by
	// the rate) and Requeues over the interval; Backlog (bytes) and Qlen
	// (packets) queued at the reading.
	Bytes      uint64 `json:"bytes,omitempty"`
	Packets    uint64 `json:"packets,omitempty"`
	Drops      uint64 `json:"drops,omitempty"`
	Overlimits uint64 `json:"overlimits,omitempty"`
	Requeues   uint64 `json:"requeues,omitempty"`
	Backlog    uint32 `json:"backlog,omitempty"`
	Qlen       uint32 `json:"qlen,omitempty"`
}

// CPUWork is the time processes outside the run took on one CPU over a
// scan interval, in percent of the CPU. A process's time is put on the CPU
// it last ran on (each thread's, for a process of several threads that
// ran).
type CPUWork struct {
	CPU int `json:"cpu"`
	// PacketPct is the kernel's packet threads (ksoftirqd, threaded IRQ
	// handlers, napi pollers): packet work, not other work; OtherPct every
	// process outside the run's tree.
	PacketPct float64 `json:"packet_pct"`
	OtherPct  float64 `json:"other_pct"`
	// Top are the busiest other processes on it (at most TopProcs).
	Top []ProcWork `json:"top,omitempty"`
}

// RunCPU is the run's threads on one CPU over an interval, in percent of
// the CPU: the time they ran (user and system), and the time they were
// ready to run and waited for it (schedstat run_delay; a sum over the
// threads, which can pass 100 with several). A thread's time goes to the
// CPU it last ran on.
type RunCPU struct {
	CPU     int     `json:"cpu"`
	Pct     float64 `json:"pct"`
	WaitPct float64 `json:"wait_pct"`
}

// ProcWork is one process's time on a CPU.
type ProcWork struct {
	PID    int     `json:"pid"`
	Comm   string  `json:"comm"`
	Pct    float64 `json:"pct"`
	Kernel bool    `json:"kernel,omitempty"` // a kernel thread
}

// Interface is an interface the run's flows route through.
type Interface struct {
	Netns uint64 `json:"netns"`
	Name  string `json:"name"`
	Index int    `json:"index"`
	Flows int    `json:"flows"`
}

// Limits on what one Sample lists.
const (
	// MaxFlows is the most flows a Sample lists, the busiest first.
	MaxFlows = 64
	// TopProcs is the most other processes listed per CPU.
	TopProcs = 3
)
