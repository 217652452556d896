package nicdiag

import (
	"errors"
	"io/fs"
	"slices"

	"github.com/nicdiag/nicdiag/nicinfo"
)

// HostFacts are the host-wide facts of the host audit that no single NIC
// owns: the idle states of the CPUs that take the selected NICs'
// interrupts, connection tracking, bridge netfilter. A nil field was not
// read (a snapshot without the files, a kernel without the feature).
type HostFacts struct {
	// Idle is cpuidle for the selected NICs' queue CPUs.
	Idle *nicinfo.Idle `json:"idle,omitempty"`
	// Conntrack is the connection-tracking table; nil without
	// nf_conntrack.
	Conntrack *nicinfo.Conntrack `json:"conntrack,omitempty"`
	// BridgeNF is br_netfilter's state; nil when it is not loaded.
	BridgeNF *nicinfo.BridgeNF `json:"bridge_nf,omitempty"`
	// KernelRelease is /proc/sys/kernel/osrelease ("6.1.0-18-amd64").
	KernelRelease string `json:"kernel_release,omitempty"`
}

// PartConntrack names the connection-tracking files in Host.Unread:
// stack.conntrack_full was not judged.
const PartConntrack Part = "connection tracking (stack.conntrack_full)"

// readHostFacts reads what HostFacts holds.
func (h *Host) readHostFacts(o options) {
	var cpus []int
	for _, n := range h.Selected {
		if n.Queues != nil {
			c, _ := queueCPUs(n, false)
			cpus = append(cpus, c...)
		}
	}
	slices.Sort(cpus)
	if x, err := nicinfo.ReadIdle(slices.Compact(cpus), o.nicinfo()...); err == nil {
		h.Facts.Idle = x
	}
	switch c, err := nicinfo.ReadConntrack(o.nicinfo()...); {
	case err == nil:
		h.Facts.Conntrack = c
	case !errors.Is(err, fs.ErrNotExist):
		h.unread(PartConntrack, "", err)
	}
	if b, err := nicinfo.ReadBridgeNF(o.nicinfo()...); err == nil {
		h.Facts.BridgeNF = b
	}
	h.Facts.KernelRelease = nicinfo.ReadKernelRelease(o.nicinfo()...)
}
