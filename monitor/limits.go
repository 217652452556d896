package monitor

import (
	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// Target is what a run samples: the network interfaces, and what the
// verdict knows of each before the run (its Limits). nicdiag.Host is
// one: monitoring starts from what Inspect read (Host.Monitor). NICs
// makes one of interfaces alone.
type Target interface {
	// Monitored returns the interfaces to sample and their Limits (an
	// interface without Limits is judged against the CPUs and the
	// command only).
	Monitored() ([]nicinfo.NIC, []Limits)
}

// NICs is a Target of nics without Limits: for a harness that knows
// nothing of them but their inventory records.
func NICs(nics ...nicinfo.NIC) Target { return nicList(nics) }

type nicList []nicinfo.NIC

func (n nicList) Monitored() ([]nicinfo.NIC, []Limits) { return n, nil }

// Limits is what the run verdict knows of one NIC before the run: the
// inputs of its ceilings, so that they can be solved again at the run's own
// frame size and direction mix. A Target gives them (nicdiag.Host builds
// them from what Inspect read); the record's start line carries them, so
// that a record is judged offline the same way. The JSON field names are a
// stable contract.
type Limits struct {
	// NIC is the interface name, as in the samples.
	NIC string `json:"nic"`
	// Address is its PCI address; empty off PCI.
	Address string `json:"pci_address,omitempty"`
	// PortMbps is the port's Ethernet line rate: the link speed the
	// driver reports. 0 when unknown, and for a virtual or misidentified
	// NIC, whose figure is nominal.
	PortMbps float64 `json:"port_mbps,omitempty"`
	// Links and Profile are the PCIe model's input for the NIC's path,
	// device first (see budget.Solve); empty without a PCIe stage.
	Links   []budget.LinkParams `json:"links,omitempty"`
	Profile *budget.Profile     `json:"profile,omitempty"`
	// Path lists the PCI functions at the ends of every hop of the path,
	// device first: their link and AER counters are read during the run.
	Path []string `json:"pcie_path,omitempty"`
	// USBMbps is the USB bus speed the NIC enumerated at; 0 off USB.
	USBMbps float64 `json:"usb_mbps,omitempty"`
	// RealDevice and BoundBy, for a NIC nicdiag found to be another device
	// under a borrowed identity, say what it probably is and what bounds
	// it; MovesMbps is what it is known to move per direction over all
	// its functions (0: unknown).
	RealDevice string  `json:"real_device,omitempty"`
	BoundBy    string  `json:"bound_by,omitempty"`
	MovesMbps  float64 `json:"moves_mbps,omitempty"`
	// Virtual marks a paravirtual or software NIC: no wire, no PCIe.
	Virtual bool `json:"virtual,omitempty"`
	// NUMANode and LocalCPUs are the NIC's node and that node's CPUs (a
	// cpulist, "64-127"), set only on a host with more than one node: a
	// command thread elsewhere works across the interconnect.
	NUMANode  int    `json:"numa_node,omitempty"`
	LocalCPUs string `json:"local_cpus,omitempty"`
	// MTU is the interface's MTU at the start (0: unknown).
	MTU int `json:"mtu,omitempty"`
	// Why says why the interface is watched (see the Why constants);
	// empty: the target gave it.
	Why string `json:"why,omitempty"`
}

// software reports whether l is an interface without a device: a veth,
// bridge, VLAN or tunnel (a paravirtual NIC on PCI is a VM's wire).
func (l Limits) software() bool { return l.Virtual && l.Address == "" && l.USBMbps == 0 }

// Why an interface is watched (Limits.Why).
const (
	// WhyNamed: the caller named it.
	WhyNamed = "named"
	// WhyPhysical: every physical NIC is watched when none is named.
	WhyPhysical = "physical"
	// WhyNoPhysical: the host has no physical NIC, so its other
	// interfaces (veth, bridges, tunnels) are watched.
	WhyNoPhysical = "no_physical"
	// WhyRouted: the command's flows leave by it (WithRoutedInterfaces).
	WhyRouted = "routed"
)

// whyWords says Limits.Why in words.
func whyWords(why string) string {
	switch why {
	case WhyNamed:
		return "named"
	case WhyPhysical:
		return "a physical NIC"
	case WhyNoPhysical:
		return "this host has no physical NIC"
	case WhyRouted:
		return "the command's flows leave by it"
	}
	return why
}
