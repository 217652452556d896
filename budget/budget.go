package budget

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// SpeedSource says where a budget's port speed came from. Its values are the
// sentences the JSON has always carried.
type SpeedSource string

// Port speed sources.
const (
	FromWorkload SpeedSource = "workload"
	FromDriver   SpeedSource = "link speed reported by the driver"
	FromChip     SpeedSource = "chip maximum from the known-device table (link speed unknown)"
	// FromModes: the port's fastest supported link mode, its link speed
	// being unknown (no carrier yet).
	FromModes SpeedSource = "fastest supported link mode (link speed unknown)"
	// FromSibling: another port of the same card's link speed, this
	// port's own and its modes being unknown.
	FromSibling SpeedSource = "link speed of another port of the same card (this port's is unknown)"
	// FromRealDevice: a misidentified device budgeted with what the real
	// device is known to move, its driver's speed being nominal.
	FromRealDevice SpeedSource = "what the real device is known to move (the driver's speed is nominal)"
)

// Budget is the throughput budget of one NIC for one workload: the Ethernet
// line rate its ports in use demand, what each PCIe hop can carry, and the
// ceiling. Mb/s are Ethernet frame bits (header and FCS, no preamble or
// gap) per second, in each direction the workload uses, summed over the ports
// in use. The JSON field names are a stable contract of `nicdiag explain
// --json`.
type Budget struct {
	// Interface is the interface name, or the PCI address of a function
	// without a netdev.
	Interface string       `json:"interface"`
	Address   pcie.Address `json:"pci_address"`
	Workload  Workload     `json:"workload"`
	// CeilingMbps is min(EthernetMbps, PCIeMbps), with the model's range.
	CeilingMbps  Range   `json:"ceiling_mbps"`
	Bound        Bound   `json:"bound"`
	EthernetMbps float64 `json:"ethernet_mbps"`
	PCIeMbps     Range   `json:"pcie_mbps"`
	// LimitingHop is the upstream port of the PCIe hop with the least
	// capacity for this workload (the kernel's "limited by ... link at"),
	// and LimitingDirection the link direction that binds there.
	LimitingHop       pcie.Address `json:"limiting_hop"`
	LimitingDirection LinkDir      `json:"limiting_direction"`
	// LimitedBy names the end of the limiting hop that a matching slot
	// would lift: "port" when the port caps its speed or width, else
	// "device"; "" when both ends agree, or when the link trained below
	// what both support (pcie.Hop.Downgraded). SpeedLimitedBy and WidthLimitedBy
	// say which end caps each.
	LimitedBy      pcie.Limiter `json:"limited_by,omitempty"`
	SpeedLimitedBy pcie.Limiter `json:"speed_limited_by,omitempty"`
	WidthLimitedBy pcie.Limiter `json:"width_limited_by,omitempty"`
	// NoPCIe says why the budget has no PCIe stage (a NIC on the root bus
	// or on USB, a virtual NIC, links that are all architectural); empty
	// when it has one.
	NoPCIe string `json:"no_pcie,omitempty"`
	// AtCapabilityMbps is the ceiling had every hop trained at what both
	// of its ends support.
	AtCapabilityMbps  Range  `json:"at_capability_mbps"`
	AtCapabilityBound Bound  `json:"at_capability_bound"`
	Profile           string `json:"profile"`
	ProfileBasis      string `json:"profile_basis"`
	// PortSpeedSource says where Workload.PortMbps came from.
	PortSpeedSource SpeedSource `json:"port_speed_source"`
	// Hops are the path's links, device first, as the model saw them.
	Hops []pcie.Hop `json:"hops"`
	// Sharers are the devices behind the path's hops that are not
	// functions of the NIC's card (an NVMe, a GPU, another NIC): the model
	// does not count them, a busy one takes part of the hop.
	Sharers []Sharer `json:"shared_with,omitempty"`
	// Model is the full solution, hop by hop.
	Model Result `json:"model"`

	links   []LinkParams // the model's input, for Inputs
	profile Profile
}

// Inputs returns what the model was solved on: the path's links, device
// first, and the DMA profile, so that another workload can be solved on the
// same path (Solve); ok is false for a budget without a PCIe stage.
func (b *Budget) Inputs() (links []LinkParams, p Profile, ok bool) {
	if len(b.links) == 0 {
		return nil, Profile{}, false
	}
	return slices.Clone(b.links), b.profile, true
}

// Hop returns the path's hop whose upstream port is addr, or nil.
func (b *Budget) Hop(addr pcie.Address) *pcie.Hop {
	for i := range b.Hops {
		if b.Hops[i].Upstream.Address == addr {
			return &b.Hops[i]
		}
	}
	return nil
}

// For solves the model for NIC n on its path for workload w. Zero fields of
// w take the defaults: 1518-byte frames, both directions, every port sharing
// the narrowest link, each at n's link speed (else its chip's top speed).
// vfs are the PCI addresses of SR-IOV virtual functions on the host: they
// share a port's wire and are not extra ports. A function without a netdev
// is passed as a NIC whose Driver is empty: its PCI driver's profile is used.
//
// A NIC with no PCIe link to model (not on PCI, virtual or emulated, on
// the root bus, or behind links that are all architectural) gets a budget
// without a PCIe stage: Ethernet-bound when its port speed is known (not
// the nominal speed of a virtual or emulated NIC), BoundNone otherwise,
// with NoPCIe saying why.
func For(n *nicinfo.NIC, vfs map[pcie.Address]bool, path *pcie.Path, w Workload) (*Budget, error) {
	return ForPorts(n, Ports{VFs: vfs}, path, w)
}

// ForPorts is For with the host's view of the ports on the path: the
// default workload counts only the ports that carry traffic, and a port
// whose link speed is unknown runs at its fastest supported mode, else at
// a sibling port's speed, before the chip's top speed.
func ForPorts(n *nicinfo.NIC, ports Ports, path *pcie.Path, w Workload) (*Budget, error) {
	vfs := ports.VFs
	name := n.ID()
	switch {
	case n.PCI == nil:
		return noPCIe(n, w, fmt.Sprintf("%s is on bus %s: no PCIe link to model", name, n.Bus), true)
	case nicinfo.IsVirtual(n):
		// Its speed is nominal too: only a speed the workload gives counts.
		return noPCIe(n, w, name+" is a virtual NIC: its PCIe link is emulated and its speed nominal", false)
	case nicinfo.Label(*n) == nicinfo.LabelEmulated:
		return noPCIe(n, w, name+" is an emulated NIC (a hypervisor's model of a real chip): its PCIe link is emulated and its speed nominal", false)
	}
	links := linkParams(path, vfs, ports.idleBut(n))
	if len(links) == 0 {
		why := noLinkReason(name, path)
		if d, ok := nicinfo.ChipOf(*n); ok && d.Integrated != nicinfo.Discrete {
			why += fmt.Sprintf("; the %s is a MAC integrated in the %s (known-device table: %s)", d.Chip, d.Integrated, d.Source)
		}
		return noPCIe(n, w, why, true)
	}
	driver := n.Driver
	if driver == "" {
		driver = n.PCI.Driver
	}
	prof, basis := ProfileFor(driver, n.PCI.VendorID, n.PCI.DeviceID)
	w, src, err := portSpeedFor(n, w, ports.SiblingMbps)
	if err != nil {
		return nil, err
	}
	res, err := Solve(links, prof, w)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	b := &Budget{
		Interface:         name,
		Address:           n.PCI.Address,
		Workload:          res.Workload,
		CeilingMbps:       res.CeilingMbps,
		Bound:             res.Bound,
		EthernetMbps:      res.EthernetMbps,
		PCIeMbps:          res.PCIeMbps,
		LimitingDirection: res.Dir,
		Profile:           prof.Name,
		ProfileBasis:      basis,
		PortSpeedSource:   src,
		Hops:              pathHops(path),
		Sharers:           sharers(n, pathHops(path), vfs),
		Model:             res,
		links:             links,
		profile:           prof,
	}
	if res.Hop >= 0 && res.Hop < len(res.Hops) {
		b.LimitingHop = pcie.Address(res.Hops[res.Hop].Addr)
		if h := b.Hop(b.LimitingHop); h != nil {
			b.SpeedLimitedBy, b.WidthLimitedBy = h.SpeedLimitedBy, h.WidthLimitedBy
			if !h.Downgraded { // a link trained below both ends: no slot's end limits it
				b.LimitedBy = limiter(h)
			}
		}
	}
	if res.AtCapability != nil {
		b.AtCapabilityMbps = res.AtCapability.CeilingMbps
		b.AtCapabilityBound = res.AtCapability.Bound
	}
	return b, nil
}

// limiter names the end a matching slot would lift: the port when it caps
// either the speed or the width, else the device.
func limiter(h *pcie.Hop) pcie.Limiter {
	if h.SpeedLimitedBy == pcie.LimitPort || h.WidthLimitedBy == pcie.LimitPort {
		return pcie.LimitPort
	}
	if h.SpeedLimitedBy != "" {
		return h.SpeedLimitedBy
	}
	return h.WidthLimitedBy
}

// noPCIe is the budget of a NIC without a PCIe stage: the Ethernet line
// rate of its port, or nothing known when the speed is unknown too.
// linkSpeed says whether the NIC's reported link speed counts (not for a
// virtual NIC, whose speed is nominal); a workload's speed always does.
func noPCIe(n *nicinfo.NIC, w Workload, why string, linkSpeed bool) (*Budget, error) {
	b := &Budget{Interface: n.ID(), NoPCIe: why, Bound: BoundNone}
	if n.PCI != nil {
		b.Address = n.PCI.Address
	}
	if err := checkNoPCIe(n, w); err != nil {
		return nil, err
	}
	if w.PortMbps <= 0 && !linkSpeed {
		b.Workload = w
		return b, nil // the link's speed does not count: nothing physical bounds it
	}
	w, src, err := portSpeedFor(n, w, 0)
	if err != nil {
		b.Workload = w
		return b, nil // no speed either: nothing nicdiag can see bounds it
	}
	if err := w.fill(1); err != nil {
		return nil, fmt.Errorf("%s: %w", n.ID(), err)
	}
	e := w.ethernetMbps()
	b.Workload, b.PortSpeedSource, b.Bound, b.EthernetMbps = w, src, BoundEthernet, e
	b.CeilingMbps = Range{Low: e, Nominal: e, High: e}
	return b, nil
}

// checkNoPCIe checks w for a NIC without a PCIe stage, whatever is known of
// its speed: without a shared link to count ports on, a NIC is one port
// (its chip's port count at most).
func checkNoPCIe(n *nicinfo.NIC, w Workload) error {
	most := 1
	if d, ok := nicinfo.ChipOf(*n); ok && d.Ports > 1 && n.Netdev() {
		most = d.Ports
	}
	if w.PortMbps <= 0 {
		w.PortMbps = 1 // the speed is checked where it is known
	}
	if err := w.fill(1); err != nil {
		return fmt.Errorf("%s: %w", n.ID(), err)
	}
	if w.Ports > most {
		return fmt.Errorf("%s: %w: %d ports, but it has %d", n.ID(), ErrInvalidWorkload, w.Ports, most)
	}
	return nil
}

// noLinkReason says why a path has nothing for the model.
func noLinkReason(name string, path *pcie.Path) string {
	switch {
	case path == nil:
		return name + ": PCIe path not read"
	case len(path.Hops) == 0 && path.Architectural != "":
		return name + ": " + path.Architectural
	case len(path.Hops) == 0:
		return name + ": no PCIe link"
	}
	var arch, unknown []string
	for _, h := range path.Hops {
		switch {
		case h.Verdict == pcie.VerdictArchitectural:
			arch = append(arch, h.Reason)
		case h.Reason != "":
			unknown = append(unknown, string(h.Upstream.Address)+": "+h.Reason)
		default:
			unknown = append(unknown, string(h.Upstream.Address)+": speed or width unknown")
		}
	}
	var parts []string
	if len(arch) > 0 {
		parts = append(parts, "architectural links: "+strings.Join(arch, "; "))
	}
	if len(unknown) > 0 {
		parts = append(parts, "links of unknown speed or width (not judged): "+strings.Join(unknown, "; "))
	}
	return name + ": no physical link to model: " + strings.Join(parts, "; ")
}

// MostPorts is the most ports that can cross any hop of the budget's path,
// or 0 when a hop carries every port in use. A workload with more ports than
// that would count other cards' ports into this path's ceiling.
func (b *Budget) MostPorts() int {
	most := 0
	for _, h := range b.Model.Hops {
		if h.Shared <= 0 {
			return 0
		}
		most = max(most, h.Shared)
	}
	return most
}

// AtMatchingSlot solves the budget again with every slot-limited hop
// trained at what the device itself supports: the ceiling a slot matching
// the card would give.
func (b *Budget) AtMatchingSlot(n *nicinfo.NIC, vfs map[pcie.Address]bool) (*Budget, error) {
	freed := &pcie.Path{Hops: append([]pcie.Hop(nil), b.Hops...)}
	for j := range freed.Hops {
		h := &freed.Hops[j]
		if h.SlotLimited {
			h.CapableSpeed = max(h.CapableSpeed, h.Downstream.Link.MaxSpeed)
			h.CapableWidth = max(h.CapableWidth, h.Downstream.Link.MaxWidth)
		}
	}
	return For(n, vfs, freed, b.Workload)
}

// linkParams turns the path's physical hops with a known speed and width
// into the model's links, counting the ports (network functions that are
// not VFs) below each. The NIC's own MRRS and MPS stay in the model when
// its link is left out (a token link inside a chip).
func linkParams(path *pcie.Path, vfs, idle map[pcie.Address]bool) []LinkParams {
	if path == nil {
		return nil
	}
	hops := pathHops(path)
	links := make([]LinkParams, 0, len(hops))
	skippedMPS := 0
	for _, h := range hops {
		mps := minKnown(h.Upstream.MaxPayload, h.Downstream.MaxPayload)
		if h.Speed <= 0 || h.Width <= 0 || h.Verdict == pcie.VerdictArchitectural && h.Tunnel == nil {
			skippedMPS = minKnown(skippedMPS, mps) // unknown or not physical: nothing to model
			continue
		}
		tunnel := 0.0
		if h.Tunnel != nil {
			tunnel = h.Tunnel.Gbps
		}
		shared, active := 0, 0
		for _, f := range h.Functions {
			if f.Network && !vfs[f.Address] {
				shared++
				if !idle[f.Address] {
					active++
				}
			}
		}
		links = append(links, LinkParams{
			Addr:       string(h.Upstream.Address),
			GTs:        h.Speed,
			Width:      h.Width,
			MaxGTs:     h.CapableSpeed,
			MaxWidth:   h.CapableWidth,
			MPS:        minKnown(mps, skippedMPS),
			MRRS:       h.Downstream.MaxReadRequest,
			RCB:        rcbOf(&h.Upstream),
			Shared:     shared,
			Active:     activeOf(active, shared),
			TunnelGbps: tunnel,
		})
	}
	if len(links) > 0 && len(path.Hops) > 0 {
		if dev := path.Hops[0].Downstream.MaxReadRequest; dev > 0 {
			links[0].MRRS = dev // the NIC issues the reads
		}
	}
	return links
}

// minKnown is the smaller of a and b, where 0 (or less) means unknown.
func minKnown(a, b int) int {
	switch {
	case a <= 0:
		return b
	case b <= 0 || a < b:
		return a
	}
	return b
}

// rcbOf is the end's Read Completion Boundary from LnkCtl, 0 if unknown.
func rcbOf(e *pcie.End) int {
	if e.Config != nil && e.Config.Express != nil {
		return e.Config.Express.RCB
	}
	return 0
}
