package monitor

import (
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/stack"
)

// Bound names the layer that set the ceiling of a run.
type Bound string

// Bounds a Verdict names, and the layers of its Ceilings.
const (
	BoundEthernet Bound = "ethernet"  // a port at its line rate
	BoundPCIe     Bound = "pcie"      // a PCIe hop of the path full
	BoundTunnel   Bound = "tunnel"    // a Thunderbolt or USB4 tunnel full
	BoundUSB      Bound = "usb"       // the USB bus a NIC sits on full
	BoundCore     Bound = "core"      // a CPU saturated, mostly by packet work
	BoundCommand  Bound = "command"   // a thread of the command saturated its CPU
	BoundNICDrops Bound = "nic_drops" // the NIC dropped received packets, no ceiling reached
	BoundPause    Bound = "pause"     // pause frames throttled one end, no ceiling reached
	// This host's own stack (package stack): a qdisc's shaping rate or
	// drops; this host's receive window or a send buffer; drops at a
	// socket; a full conntrack table; the run's CPUs busy with work that
	// is not the run's (other processes, or the hypervisor's: steal).
	BoundQdisc     Bound = "qdisc"
	BoundTransport Bound = "transport"
	BoundSocket    Bound = "socket"
	BoundConntrack Bound = "conntrack"
	BoundOtherWork Bound = "other_work"
	// BoundOutside: nothing in this host was near its limit: the peer,
	// the network, the load generator's settings, or the processor of a
	// card that is a computer of its own.
	BoundOutside Bound = "outside_host"
	BoundUnknown Bound = "unknown" // no traffic, or nothing to judge it by
	// LayerCard is a ceiling only, never a verdict: what a misidentified
	// card (a router on a PCIe card) is known to move. It is outside the
	// host.
	LayerCard Bound = "card"
)

// Thresholds of the run verdict. They are chosen not to cry wolf: a run at
// 60 % of every ceiling with idle cores is outside_host, whatever its
// absolute number.
const (
	// boundShare: a ceiling bound the run when the run moved at least this
	// share of it.
	boundShare = 0.90
	// physicalEdge: a physical ceiling (ethernet, pcie, tunnel, usb)
	// within this share of the busiest CPU is named first: a full link
	// stops any core from doing more.
	physicalEdge = 0.02
	// dropShare and dropPerS: NIC drops count when at least this share of
	// the packets offered and at least dropPerS per second.
	dropShare = 0.001
	dropPerS  = 10.0
	// pausePerS: pause frames count at this rate or more.
	pausePerS = 10.0
	// ownCPUShare: a CPU counts as the run's when the run's own work on it,
	// irq+softirq and the command's threads, is at least this share of its
	// busy time: the command's when its threads are the larger part, a
	// packet core otherwise.
	ownCPUShare = 0.5
	// saturatedOwnPct: with every CPU busy, the host bounds the run only
	// when the run's packet work and command threads add up to at least
	// this much of one CPU.
	saturatedOwnPct = 25.0
	// hotPacketPct: a core at this much irq+softirq has no other work to
	// give up; below it, the sentence says what it would carry at 100 %.
	hotPacketPct = 90.0
	// minMbps and minPPS: below both at its busiest, a run moved nothing
	// worth judging.
	minMbps = 1.0
	minPPS  = 1000.0
)

// Verdict is the judgement on a run: what it achieved against each
// ceiling at its own frame size and direction mix, and which one bound it.
// Mb/s are Ethernet frame bits (header and FCS, no preamble or gap), the
// budget model's unit. The JSON field names are a stable contract.
type Verdict struct {
	Bound Bound `json:"bound"`
	// Limit is the ceiling the run reached (nil for outside_host, unknown,
	// nic_drops and pause); Next is the one it would reach next.
	Limit *Ceiling `json:"limit,omitempty"`
	Next  *Ceiling `json:"next,omitempty"`
	// AchievedMbps and CeilingMbps are Limit's (else the nearest
	// ceiling's), per direction: the larger of the two directions of the
	// NICs it covers.
	AchievedMbps float64  `json:"achieved_mbps"`
	CeilingMbps  *float64 `json:"ceiling_mbps"`
	Share        *float64 `json:"share"`
	// Summary is the verdict in a sentence.
	Summary string `json:"summary"`
	// Ceilings are every ceiling judged, nearest first.
	Ceilings []Ceiling `json:"ceilings"`
	// Traffic is each NIC and direction over the run's span.
	Traffic []Traffic `json:"traffic"`
	// Losses are the loss counters that counted, per NIC.
	Losses []Loss `json:"losses,omitempty"`
	// BusiestCPU is the CPU with the most busy time in the span.
	BusiestCPU *CPULoad `json:"busiest_cpu,omitempty"`
	// Samples is the number of samples. ActiveSamples are those of the
	// run's span, from the first to the last that moved traffic (see
	// Window), and ActiveSeconds how long its traffic lasted: the rates
	// are over those seconds, as a load generator's own report is over
	// its run.
	Samples       int     `json:"samples"`
	ActiveSamples int     `json:"active_samples"`
	ActiveSeconds float64 `json:"active_seconds"`
	// PeakMbps is the busiest sample's busier direction over every
	// sampled NIC, in frame Mb/s.
	PeakMbps float64 `json:"peak_mbps"`
	// Findings are the verdict's own finding and those of losses and link
	// changes beside it.
	Findings []finding.Finding `json:"findings"`
	// Cause is the judgement of this host's stack that bound the run
	// (transport, socket, qdisc, conntrack, other_work), where one did
	// without a ceiling; nil otherwise.
	Cause *stack.Judgement `json:"cause,omitempty"`
	// Stack is this host's stack over the run (nil where it was not
	// read): each layer's state, what it found, the flows, qdiscs and
	// other work.
	Stack *stack.Summary `json:"stack,omitempty"`
	// CPUs is each CPU's mean load over the run's span, with the other
	// work on it.
	CPUs []CPULoad `json:"cpus,omitempty"`
	// Watched are the interfaces sampled, why, and whether the verdict
	// judged them.
	Watched []Watched `json:"watched,omitempty"`

	unread []string // what could not be read, for an unknown verdict's fix
	fix    string   // the verdict's fix where the judgement has a better one
}

// Watched is an interface a run sampled.
type Watched struct {
	NIC string `json:"nic"`
	// Why is Limits.Why ("named", "physical", "no_physical", "routed"),
	// empty where the target gave it.
	Why string `json:"why,omitempty"`
	// Virtual marks a software or paravirtual interface.
	Virtual bool `json:"virtual,omitempty"`
	// Judged: the verdict weighed its traffic. A virtual interface is
	// judged only when no physical one moved traffic (the same traffic
	// crosses both where one sits on the other).
	Judged bool `json:"judged"`
}

// Ceiling is one limit judged at the run's mix.
type Ceiling struct {
	Layer Bound `json:"layer"`
	// Subject is the NIC (ethernet, usb), the upstream port of the hop
	// (pcie, tunnel), "cpu N" (core), "TID (COMM) on cpu N" (command).
	Subject string   `json:"subject"`
	NICs    []string `json:"nics"`
	// What says it in words: "the 2.5 GT/s x1 link at 0000:00:1c.0".
	What string `json:"what"`
	// Direction is rx or tx for a port; up or down for a PCIe hop.
	Direction string `json:"direction,omitempty"`
	// AchievedMbps is what the NICs it covers moved, per direction (the
	// larger direction); CeilingMbps what they would move with it full at
	// the same mix; Share the first over the second.
	AchievedMbps float64 `json:"achieved_mbps"`
	CeilingMbps  float64 `json:"ceiling_mbps"`
	Share        float64 `json:"share"`
	// CPU and TID locate a core or command ceiling.
	CPU *int `json:"cpu,omitempty"`
	TID int  `json:"tid,omitempty"`
	// saturated marks the core ceiling of a host whose every CPU was
	// full, whatever with.
	saturated bool
	// held marks a shaper that held packets back (stack.QdiscSummary.HeldBack).
	held bool
}

// Traffic is one NIC in one direction over the run's span.
type Traffic struct {
	NIC            string  `json:"nic"`
	Direction      string  `json:"direction"` // rx or tx
	FramesPerS     float64 `json:"frames_per_s"`
	AchievedMbps   float64 `json:"achieved_mbps"`
	MeanFrameBytes float64 `json:"mean_frame_bytes"`
	// CeilingMbps is what this NIC would move in this direction with its
	// nearest ceiling full, at the same mix; CeilingLayer names it.
	CeilingMbps  *float64 `json:"ceiling_mbps"`
	CeilingLayer Bound    `json:"ceiling_layer,omitempty"`
}

// Loss is one NIC's packets lost or held back, by class, over the run.
type Loss struct {
	NIC   string        `json:"nic"`
	Class irq.LossClass `json:"class"`
	// Counters names the counters summed.
	Counters []string `json:"counters"`
	Count    float64  `json:"count"`
	PerS     float64  `json:"per_s"`
	// OfferedShare, for NIC drops, is Count over the packets received
	// plus Count.
	OfferedShare *float64 `json:"offered_share,omitempty"`
}

// CPULoad is a CPU's mean load over the run's span.
type CPULoad struct {
	CPU        int      `json:"cpu"`
	BusyPct    float64  `json:"busy_pct"`
	PacketPct  float64  `json:"packet_pct"` // irq+softirq
	IRQPct     *float64 `json:"irq_pct"`
	SoftIRQPct float64  `json:"softirq_pct"`
	UserPct    float64  `json:"user_pct"`
	SystemPct  float64  `json:"system_pct"`
	StealPct   float64  `json:"steal_pct"`
	// MHz is its mean clock over the samples that read it, MaxMHz its
	// maximum; nil where cpufreq was not read (the sampler reads the four
	// busiest CPUs' only).
	MHz    *float64 `json:"mhz,omitempty"`
	MaxMHz *float64 `json:"max_mhz,omitempty"`
	// OtherPct is the time processes outside the run took on it (the
	// stack's process scans), Other the busiest of them; nil where the
	// process table was not scanned.
	OtherPct *float64         `json:"other_pct,omitempty"`
	Other    []stack.ProcWork `json:"other,omitempty"`
}

// Same reports whether o is the same ceiling as c (a copy, as Limit and
// Next are of entries of Ceilings).
func (c Ceiling) Same(o Ceiling) bool {
	return c.Layer == o.Layer && c.Subject == o.Subject && c.Direction == o.Direction && c.What == o.What
}
