// Package finding defines the one verdict type that every nicdiag package
// produces: a stable code, a severity, the subject it is about, a sentence a
// person reads, the evidence it rests on and, where they exist, numbers.
package finding

import (
	"fmt"
	"sort"
)

// Severity orders findings; the CLI's exit code follows the worst one.
type Severity int

// Severities, least to worst.
const (
	Info Severity = iota
	Warn
	Error
)

var sevNames = [...]string{"info", "warn", "error"}

// String returns "info", "warn" or "error".
func (s Severity) String() string {
	if s < 0 || int(s) >= len(sevNames) {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return sevNames[s]
}

// MarshalText encodes the severity as its name.
func (s Severity) MarshalText() ([]byte, error) {
	if s < 0 || int(s) >= len(sevNames) {
		return nil, fmt.Errorf("finding: invalid severity %d", int(s))
	}
	return []byte(sevNames[s]), nil
}

// UnmarshalText decodes "info", "warn" or "error".
func (s *Severity) UnmarshalText(b []byte) error {
	for i, n := range sevNames {
		if string(b) == n {
			*s = Severity(i)
			return nil
		}
	}
	return fmt.Errorf("finding: unknown severity %q", b)
}

// Code is a finding's stable dotted identifier ("pcie.bottleneck").
type Code string

// Codes in use. The README lists each with its meaning and the usual fix.
const (
	PCIeLinkDowngraded     Code = "pcie.link_downgraded"
	PCIeSlotLimited        Code = "pcie.slot_limited"
	PCIeBottleneck         Code = "pcie.bottleneck"
	PCIeIdleDowntrained    Code = "pcie.idle_downtrained"
	NICMisidentified       Code = "nic.misidentified"
	NICLinkBelowCapability Code = "nic.link_below_capability"
	NICSingleQueue         Code = "nic.single_queue"
	NICUSBBus              Code = "nic.usb_bus"
	IRQAffinityConcentrate Code = "irq.affinity_concentrated"
	IRQHotCore             Code = "irq.hot_core"
	IRQNUMARemote          Code = "irq.numa_remote"
	SoftnetDrops           Code = "softnet.drops"
	SoftnetSqueeze         Code = "softnet.squeeze"
	// The run verdict (monitor.Judge): which layer bound a monitored run.
	RunEthernetBound Code = "run.ethernet_bound"
	RunPCIeBound     Code = "run.pcie_bound"
	RunTunnelBound   Code = "run.tunnel_bound"
	RunUSBBound      Code = "run.usb_bound"
	RunCoreBound     Code = "run.core_bound"
	RunCommandBound  Code = "run.command_bound"
	RunNICDrops      Code = "run.nic_drops"
	RunPause         Code = "run.pause"
	RunOutsideHost   Code = "run.outside_host"
	RunUnknown       Code = "run.unknown"
	// Beside the run verdict: a cloud allowance exceeded, a PCIe link
	// that changed speed or width, AER errors on the path.
	RunAllowance   Code = "run.allowance_exceeded"
	RunLinkChanged Code = "run.link_changed"
	RunAERErrors   Code = "run.aer_errors"
	// Where the command's busiest thread ran: on a CPU that takes the
	// NICs' interrupts, or off the NIC's NUMA node.
	RunCommandOnIRQCPU   Code = "run.command_on_irq_cpu"
	RunCommandRemoteNode Code = "run.command_remote_node"
	// RunCoreClockLow: the CPU that bound a run ran below three quarters
	// of its maximum clock.
	RunCoreClockLow Code = "run.core_clock_low"
	// This host's own stack during a run (package stack): a shaper's rate
	// or a qdisc's drops, this host's receive window or a send buffer,
	// drops at sockets, a full conntrack table, other work on the run's
	// CPUs.
	RunQdiscBound     Code = "run.qdisc_bound"
	RunQdiscDrops     Code = "run.qdisc_drops"
	RunWindowBound    Code = "run.window_bound"
	RunSndbufBound    Code = "run.sndbuf_bound"
	RunSocketDrops    Code = "run.socket_drops"
	RunConntrackDrops Code = "run.conntrack_drops"
	RunOtherWork      Code = "run.other_work"
	// RunOneQueue: one queue of several carried nearly all of a hot
	// core's traffic (one flow, or a poor hash); RunSmallMTU: a core
	// bound by packets of a 1500-byte MTU where the NIC takes more.
	RunOneQueue Code = "run.one_queue"
	RunSmallMTU Code = "run.small_mtu"
	// NIC drops since boot judged with the RX ring size (ethtool -g), and
	// a ring that holds under 1 ms at line rate.
	NICRingDrops Code = "nic.ring_drops"
	NICRingSmall Code = "nic.ring_small"
	// Virtual and cloud NICs: an emulated chip in a VM, a virtio NIC whose
	// host offers one queue pair, an SR-IOV VF whose PF caps its rate.
	NICEmulated          Code = "nic.emulated"
	NICVirtioSingleQueue Code = "nic.virtio_single_queue"
	NICVFRateLimited     Code = "nic.vf_rate_limited"
	// Offloads the driver can do turned off, LRO on a forwarding host,
	// and receive interrupt moderation off.
	NICOffloadOff    Code = "nic.offload_off"
	NICLROForwarding Code = "nic.lro_forwarding"
	NICCoalesceOff   Code = "nic.coalesce_off"
	// Queue IRQs on SMT siblings of fewer physical cores, and the CPUs
	// that take a NIC's IRQs held at a low clock by frequency scaling.
	IRQSMTSiblings Code = "irq.smt_siblings"
	CPUPowersave   Code = "cpu.powersave"
	// PCIe health: an MPS below what the path supports where that costs
	// throughput, AER errors since boot on the path's ends, translated
	// DMA (an IOMMU DMA domain) on a 40 Gb/s or faster NIC.
	PCIeMPSLow          Code = "pcie.mps_low"
	PCIeAERErrors       Code = "pcie.aer_errors"
	PCIeIOMMUTranslated Code = "pcie.iommu_translated"
	// NICLinkFlapping: a carrier that went down 10 times or more since
	// boot (carrier_down_count).
	NICLinkFlapping Code = "nic.link_flapping"
	// NICKnownIssue: a row of the known-issue table (chip, revision,
	// driver and a condition such as EEE active) matches the NIC.
	NICKnownIssue Code = "nic.known_issue"
	// BondSingleFlow: a bond of N members hashes each flow onto one of
	// them, so one flow gets one member's speed; warn when the hash policy
	// (layer2, layer2+3) puts all traffic between two hosts on one member.
	BondSingleFlow Code = "bond.single_flow"
	// BondMemberMismatch: a bond's members at different speeds, or one
	// down: the slower member caps the flows hashed to it.
	BondMemberMismatch Code = "bond.member_mismatch"
	// NICPauseFrames: pause frames since boot, received (the peer
	// throttled this host's sending) or sent (this host throttled the
	// peer because it could not take what arrived).
	NICPauseFrames Code = "nic.pause_frames"
	// NICAllowanceExceeded: a cloud NIC's per-instance allowance counters
	// (ENA's bw_in/bw_out/pps/conntrack/linklocal_allowance_exceeded)
	// since boot: the platform queued or dropped packets.
	NICAllowanceExceeded Code = "nic.allowance_exceeded"
	// NICLinkErrors: frames received damaged (CRC/FCS, symbol, alignment,
	// framing) or FEC blocks it could not correct, as a share of the
	// frames received: each one is lost and resent by TCP.
	NICLinkErrors Code = "nic.link_errors"
	// NICModuleDiagnostics: a pluggable module's own diagnostics
	// (temperature, voltage, bias, TX and RX power) beyond the module's
	// alarm or warning thresholds.
	NICModuleDiagnostics Code = "nic.module_diagnostics"
	// PCIeSharedUplink: a PCIe link on a NIC's path (a chipset uplink, a
	// switch's) also carries other devices (NVMe, a GPU, another NIC)
	// that together can take more than it leaves the NIC.
	PCIeSharedUplink Code = "pcie.shared_uplink"
	// CPUIdleDeep: deep idle states enabled on the CPUs that take a
	// NIC's interrupts: each wake-up costs the state's exit latency.
	CPUIdleDeep Code = "cpu.idle_deep"
	// StackConntrackFull: the connection-tracking table near its maximum,
	// or dropping for want of room.
	StackConntrackFull Code = "stack.conntrack_full"
	// StackBridgeNetfilter: br_netfilter sends bridged frames through
	// iptables on a host with bridges.
	StackBridgeNetfilter Code = "stack.br_netfilter"
	// NICTunnelOffload: a VXLAN or Geneve device with the offload state
	// known to slow tunnels, or an inner MTU the underlay cannot carry.
	NICTunnelOffload Code = "nic.tunnel_offload"
	// NICXDPGeneric: an XDP program attached in generic (skb) mode to a
	// NIC whose driver runs XDP natively.
	NICXDPGeneric Code = "nic.xdp_generic"
	// NICKnownWorkaround: a setting recognised as a known workaround (the
	// e1000e "Hardware Unit Hang" offloads off), named with its cost.
	NICKnownWorkaround Code = "nic.known_workaround"
	// NicdiagIncomplete says a check family could not run, or ran on
	// less than it needs, so that its silence is not read as clean.
	NicdiagIncomplete Code = "nicdiag.incomplete"
)

// Finding is one verdict. The JSON field names are a stable contract.
type Finding struct {
	Code     Code     `json:"code"`
	Severity Severity `json:"severity"`
	// Subject is an interface name or a PCI address.
	Subject string `json:"subject"`
	// Summary is one sentence a person reads.
	Summary string `json:"summary"`
	// Fix says what usually resolves it; may be empty.
	Fix string `json:"fix,omitempty"`
	// Evidence holds the values the verdict rests on, by name.
	Evidence map[string]string `json:"evidence,omitempty"`
	// Numbers, where the verdict has them.
	CapacityMbps *float64 `json:"capacity_mbps,omitempty"`
	DemandMbps   *float64 `json:"demand_mbps,omitempty"`
	Direction    string   `json:"direction,omitempty"`
}

// String renders "warn pcie.link_downgraded 0000:01:00.0: summary".
func (f Finding) String() string {
	return fmt.Sprintf("%s %s %s: %s", f.Severity, f.Code, f.Subject, f.Summary)
}

// Mbps returns a pointer to v, for the optional number fields.
func Mbps(v float64) *float64 { return &v }

// Sort orders findings worst first, then by code and subject, so output is
// stable.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Subject < b.Subject
	})
}

// Worst returns the highest severity in fs, and false when fs is empty.
func Worst(fs []Finding) (Severity, bool) {
	if len(fs) == 0 {
		return Info, false
	}
	w := Info
	for _, f := range fs {
		if f.Severity > w {
			w = f.Severity
		}
	}
	return w, true
}
