package budget

import (
	"fmt"

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
	// LimitedBy says whose capability sets the limiting hop's speed or
	// width, or "" when both ends agree.
	LimitedBy pcie.Limiter `json:"limited_by,omitempty"`
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
	// Model is the full solution, hop by hop.
	Model Result `json:"model"`
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
func For(n *nicinfo.NIC, vfs map[pcie.Address]bool, path *pcie.Path, w Workload) (*Budget, error) {
	name := n.ID()
	if path == nil || len(path.Hops) == 0 {
		why := "no PCIe link"
		if path != nil && path.Architectural != "" {
			why = path.Architectural
		}
		return nil, fmt.Errorf("%s: %s: %w", name, why, ErrNoPCIePath)
	}
	if n.PCI == nil {
		return nil, fmt.Errorf("%s is on bus %q: %w", name, n.Bus, ErrNoPCIePath)
	}
	if nicinfo.IsVirtual(n) {
		return nil, ErrVirtualNIC(name)
	}
	driver := n.Driver
	if driver == "" {
		driver = n.PCI.Driver
	}
	prof, basis := ProfileFor(driver, n.PCI.VendorID, n.PCI.DeviceID)
	src := FromWorkload
	if w.PortMbps <= 0 {
		w.PortMbps, src = portSpeed(n)
		if w.PortMbps <= 0 {
			return nil, fmt.Errorf("%s: link speed unknown and chip not in the known-device table; give the port speed: %w", name, ErrInvalidWorkload)
		}
	}
	links := linkParams(path, vfs)
	if len(links) == 0 {
		return nil, fmt.Errorf("%s: no hop with a known speed and width: %w", name, ErrNoPCIePath)
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
		Hops:              path.Hops,
		Model:             res,
	}
	if res.Hop >= 0 && res.Hop < len(res.Hops) {
		b.LimitingHop = pcie.Address(res.Hops[res.Hop].Addr)
		if h := b.Hop(b.LimitingHop); h != nil {
			b.LimitedBy = h.SpeedLimitedBy
			if b.LimitedBy == "" {
				b.LimitedBy = h.WidthLimitedBy
			}
		}
	}
	if res.AtCapability != nil {
		b.AtCapabilityMbps = res.AtCapability.CeilingMbps
		b.AtCapabilityBound = res.AtCapability.Bound
	}
	return b, nil
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

// linkParams turns the path's hops with a known speed and width into the
// model's links, counting the ports (network functions that are not VFs)
// below each.
func linkParams(path *pcie.Path, vfs map[pcie.Address]bool) []LinkParams {
	links := make([]LinkParams, 0, len(path.Hops))
	for _, h := range path.Hops {
		if h.Speed <= 0 || h.Width <= 0 {
			continue // unknown hop: the model cannot use it
		}
		shared := 0
		for _, f := range h.Functions {
			if f.Network && !vfs[f.Address] {
				shared++
			}
		}
		links = append(links, LinkParams{
			Addr:     string(h.Upstream.Address),
			GTs:      h.Speed,
			Width:    h.Width,
			MaxGTs:   h.CapableSpeed,
			MaxWidth: h.CapableWidth,
			MPS:      minKnown(h.Upstream.MaxPayload, h.Downstream.MaxPayload),
			MRRS:     h.Downstream.MaxReadRequest,
			RCB:      rcbOf(&h.Upstream),
			Shared:   shared,
		})
	}
	return links
}

// portSpeed is the NIC's negotiated speed, else its chip's top speed from
// the known-device table; 0 when neither is known.
func portSpeed(n *nicinfo.NIC) (float64, SpeedSource) {
	if n.Link.SpeedMbps > 0 {
		return float64(n.Link.SpeedMbps), FromDriver
	}
	if n.PCI != nil {
		if d, ok := nicinfo.LookupDevice(n.PCI.VendorID, n.PCI.DeviceID); ok && d.MaxMbps > 0 {
			return float64(d.MaxMbps), FromChip
		}
	}
	return 0, ""
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
