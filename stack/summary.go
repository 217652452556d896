package stack

// Layer names a layer of this host's stack that can set a run's ceiling.
type Layer string

// The layers judged.
const (
	// LayerTransport: a TCP flow held by a receive window (this host's or
	// the peer's), by its send buffer, or by loss or congestion on the
	// path (outside this host).
	LayerTransport Layer = "transport"
	// LayerSocket: datagrams or segments dropped at a socket of this host.
	LayerSocket Layer = "socket"
	// LayerQdisc: a qdisc's shaping rate or its drops.
	LayerQdisc Layer = "qdisc"
	// LayerConntrack: a full connection tracking table.
	LayerConntrack Layer = "conntrack"
	// LayerOtherWork: the run's CPUs busy with processes that are not the
	// run's.
	LayerOtherWork Layer = "other_work"
)

// Layers lists every layer, in the order the Summary reports them.
var Layers = []Layer{LayerTransport, LayerSocket, LayerQdisc, LayerConntrack, LayerOtherWork}

// State says what a layer's judgement found.
type State string

// States of a layer.
const (
	// StateBound: the layer held the run back (a Judgement says how).
	StateBound State = "bound"
	// StateRoom: the layer was read and had room.
	StateRoom State = "room"
	// StateNotApplicable: the layer does not exist here (no conntrack in
	// the kernel, no shaper on the interfaces, no flow to judge).
	StateNotApplicable State = "not_applicable"
	// StateUnknown: the layer could not be read (LayerStatus.Note says
	// why): it is neither bound nor known to have room.
	StateUnknown State = "unknown"
)

// Summary is a run's stack over its samples: per layer the numbers and
// the judgement. Its JSON field names are a stable contract.
type Summary struct {
	Samples int     `json:"samples"`
	Seconds float64 `json:"seconds"`
	// Layers is each layer's state, in the order of Layers.
	Layers []LayerStatus `json:"layers"`
	// Judgements are what the layers found, those that bound the run
	// first, then by share, highest first.
	Judgements []Judgement        `json:"judgements,omitempty"`
	Flows      []FlowSummary      `json:"flows,omitempty"`
	Namespaces []NamespaceSummary `json:"namespaces,omitempty"`
	Qdiscs     []QdiscSummary     `json:"qdiscs,omitempty"`
	CPUs       []CPUSummary       `json:"cpus,omitempty"`
	Interfaces []InterfaceSummary `json:"interfaces,omitempty"`
	Missing    []string           `json:"missing,omitempty"`
}

// LayerStatus is one layer's state.
type LayerStatus struct {
	Layer Layer  `json:"layer"`
	State State  `json:"state"`
	Note  string `json:"note,omitempty"`
}

// Judgement is one thing a layer found. Rates are payload (transport) or
// what the qdisc counts (qdisc) in megabits per second.
type Judgement struct {
	Layer Layer `json:"layer"`
	// Kind says which limit: transport "local_window", "peer_window",
	// "send_buffer", "path_loss", "congestion", "app_limited",
	// "receiver_behind"; socket
	// "udp_receive_buffer", "udp_send_buffer", "tcp_receive_drops",
	// "listen_overflow"; qdisc "shaper", "qdisc_drops"; conntrack
	// "conntrack_full", "conntrack_drops"; other_work "other_work".
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	// Bound: this held the run back. Outside: the limit is outside this
	// host (the path, the peer), with the evidence here.
	Bound   bool `json:"bound"`
	Outside bool `json:"outside,omitempty"`
	// AchievedMbps and CeilingMbps where the limit is a rate (0: none);
	// Share is how near the limit it ran: achieved ÷ ceiling, or the share
	// of time, datagrams or packets held back (0 to 1).
	AchievedMbps float64  `json:"achieved_mbps,omitempty"`
	CeilingMbps  float64  `json:"ceiling_mbps,omitempty"`
	Share        float64  `json:"share"`
	Summary      string   `json:"summary"`
	Fix          string   `json:"fix,omitempty"`
	Evidence     []string `json:"evidence,omitempty"`
}

// FlowSummary is one flow over the run. Rates are payload bits per second
// over the flow's span (from its first to its last interval that moved
// data).
type FlowSummary struct {
	Netns   uint64  `json:"netns"`
	Proto   string  `json:"proto"`
	Local   string  `json:"local"`
	Peer    string  `json:"peer"`
	PID     int     `json:"pid,omitempty"`
	Comm    string  `json:"comm,omitempty"`
	Iface   string  `json:"iface,omitempty"`
	Seconds float64 `json:"seconds"`
	// SendMbps and RecvMbps: bytes sent (tcpi_bytes_sent) and received.
	SendMbps      float64 `json:"send_mbps"`
	RecvMbps      float64 `json:"recv_mbps"`
	BytesSent     uint64  `json:"bytes_sent"`
	BytesReceived uint64  `json:"bytes_received"`
	BytesRetrans  uint64  `json:"bytes_retrans"`
	// BusyShare is the share of the span it had data to send;
	// RwndLimitedShare and SndbufLimitedShare the shares of that busy
	// time held by the peer's window and by the send buffer. Timers is
	// false when the kernel did not report them.
	BusyShare          float64 `json:"busy_share"`
	RwndLimitedShare   float64 `json:"rwnd_limited_share"`
	SndbufLimitedShare float64 `json:"sndbuf_limited_share"`
	Timers             bool    `json:"timers"`
	// RetransShare is bytes retransmitted ÷ bytes sent.
	RetransShare float64 `json:"retrans_share"`
	// RTTMs is the mean smoothed RTT, MinRTTMs the lowest seen, RcvRTTMs
	// the receiver's mean estimate (0: none).
	RTTMs    float64 `json:"rtt_ms"`
	MinRTTMs float64 `json:"min_rtt_ms"`
	RcvRTTMs float64 `json:"rcv_rtt_ms"`
	// SndWndMax and RcvWndMax are the largest windows the peer and this
	// socket advertised (0: not reported); RcvbufMax and SndbufMax the
	// largest buffer sizes; CwndMax in segments.
	SndWndMax uint32 `json:"snd_wnd_max,omitempty"`
	RcvWndMax uint32 `json:"rcv_wnd_max,omitempty"`
	RcvbufMax uint32 `json:"rcvbuf_max"`
	SndbufMax uint32 `json:"sndbuf_max"`
	CwndMax   uint32 `json:"cwnd_max,omitempty"`
	// RecvQueueFullShare is the share of the readings, of those in which
	// the flow received, that found its receive queue over half its
	// buffer: the receiving application was behind.
	RecvQueueFullShare float64 `json:"recv_queue_full_share,omitempty"`
	Drops              uint64  `json:"drops,omitempty"`
}

// NamespaceSummary is one network namespace over the run: its socket
// counters summed, its buffer sysctls as last read, its conntrack.
type NamespaceSummary struct {
	ID      uint64         `json:"id"`
	Path    string         `json:"path,omitempty"`
	Seconds float64        `json:"seconds"`
	Sockets SocketCounters `json:"sockets"`
	Buffers *Buffers       `json:"buffers,omitempty"`
	// ConntrackMaxCount is the highest count seen, Conntrack the last
	// reading's table with the statistics summed.
	ConntrackMaxCount int64      `json:"conntrack_max_count,omitempty"`
	Conntrack         *Conntrack `json:"conntrack,omitempty"`
	ConntrackAbsent   bool       `json:"conntrack_absent,omitempty"`
}

// QdiscSummary is one qdisc or class over the run.
type QdiscSummary struct {
	Netns      uint64  `json:"netns"`
	Iface      string  `json:"iface"`
	Kind       string  `json:"kind"`
	Handle     string  `json:"handle"`
	Parent     string  `json:"parent"`
	Class      bool    `json:"class,omitempty"`
	Rate       uint64  `json:"rate,omitempty"`
	Ceil       uint64  `json:"ceil,omitempty"`
	Seconds    float64 `json:"seconds"`
	Mbps       float64 `json:"mbps"`
	Bytes      uint64  `json:"bytes"`
	Packets    uint64  `json:"packets"`
	Drops      uint64  `json:"drops"`
	Overlimits uint64  `json:"overlimits"`
	Requeues   uint64  `json:"requeues"`
	BacklogMax uint32  `json:"backlog_max"`
}

// CPUSummary is the work on one CPU, in percent of the CPU: the run's
// (RunPct, and RunWaitPct waiting for it) over the run, the packet
// threads' and other processes' over the process scans. A task's time goes
// to the CPU it last ran on, so a CPU's shares can add up past 100 where
// tasks moved.
type CPUSummary struct {
	CPU        int        `json:"cpu"`
	RunPct     float64    `json:"run_pct"`
	RunWaitPct float64    `json:"run_wait_pct"`
	PacketPct  float64    `json:"packet_pct"`
	OtherPct   float64    `json:"other_pct"`
	Top        []ProcWork `json:"top,omitempty"`
}

// InterfaceSummary is an interface the run's flows went through.
type InterfaceSummary struct {
	Netns uint64 `json:"netns"`
	Name  string `json:"name"`
	// Flows is the most flows seen on it in one interval.
	Flows int `json:"flows"`
}
