package nicdiag

import (
	"context"
	"errors"
	"fmt"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// ErrNoPCIePath is returned by Explain for an interface that has no PCIe
// link to model: a virtual interface, a USB NIC, a conventional-PCI device,
// or one integrated in the chipset.
var ErrNoPCIePath = errors.New("no PCIe link to model")

// Budget is the throughput budget of one NIC for one workload: the Ethernet
// line rate its ports in use demand, what each PCIe hop can carry, and the
// ceiling. Mb/s are Ethernet frame bits (header and FCS, no preamble or
// gap) per second, in each direction the workload uses, summed over the ports
// in use. The JSON field names are a stable contract (docs/design.md §3).
type Budget struct {
	Interface string        `json:"interface"`
	Address   string        `json:"pci_address"`
	Workload  pcie.Workload `json:"workload"`
	// CeilingMbps is min(EthernetMbps, PCIeMbps), with the model's range.
	CeilingMbps  pcie.Range `json:"ceiling_mbps"`
	Bound        pcie.Bound `json:"bound"`
	EthernetMbps float64    `json:"ethernet_mbps"`
	PCIeMbps     pcie.Range `json:"pcie_mbps"`
	// LimitingHop is the upstream port of the PCIe hop with the least
	// capacity for this workload (the kernel's "limited by ... link at"),
	// and LimitingDirection the link direction that binds there.
	LimitingHop       string       `json:"limiting_hop"`
	LimitingDirection pcie.LinkDir `json:"limiting_direction"`
	// LimitedBy says whose capability sets the limiting hop's speed or
	// width: "device", "port", or "" when both ends agree.
	LimitedBy string `json:"limited_by,omitempty"`
	// AtCapabilityMbps is the ceiling had every hop trained at what both
	// of its ends support.
	AtCapabilityMbps  pcie.Range `json:"at_capability_mbps"`
	AtCapabilityBound pcie.Bound `json:"at_capability_bound"`
	Profile           string     `json:"profile"`
	ProfileBasis      string     `json:"profile_basis"`
	// PortSpeedSource says where PortMbps came from.
	PortSpeedSource string `json:"port_speed_source"`
	// Hops are the path's links, device first, as the model saw them.
	Hops []pcie.Hop `json:"hops"`
	// Model is the full solution, hop by hop.
	Model pcie.Result `json:"model"`
}

// Explain computes the throughput budget of the interface called iface for
// workload w. Zero fields of w take the defaults of docs/design.md §3: 1518-byte
// frames, both directions, every port sharing the narrowest link, each at the
// interface's link speed.
//
// iface may also be the PCI address of a network-class function without a
// netdev (see nicinfo.NoNetdev): its budget uses its PCI driver's DMA
// profile (vfio-pci and the other DPDK drivers: the DPDK poll-mode profile)
// and, unless w gives a port speed, the chip's top speed from the
// known-device table; Budget.Interface is then the address.
func Explain(ctx context.Context, iface string, w pcie.Workload, opts ...Option) (*Budget, error) {
	o := buildOptions(opts)
	nics, err := nicinfo.List(ctx, o.nicinfo()...)
	if err != nil {
		return nil, err
	}
	var n *nicinfo.NIC
	for i := range nics {
		if nics[i].Name == iface {
			n = &nics[i]
		}
	}
	if addr := normBDF(iface); n == nil && addr != "" {
		// The PCI address of a function with a netdev: its interface.
		for i := range nics {
			if nics[i].PCI != nil && nics[i].PCI.Address == addr {
				n = &nics[i]
				break
			}
		}
	}
	if n == nil {
		bare, err := nicinfo.NoNetdev(ctx, o.nicinfo()...)
		if err != nil {
			return nil, err
		}
		i := findNoNetdev(bare, iface)
		if i < 0 {
			return nil, fmt.Errorf("nicdiag: %q: %w", iface, nicinfo.ErrNoInterface)
		}
		nics = withNoNetdev(nics, bare)
		n = &nics[len(nics)-len(bare)+i]
	}
	path, err := pathOf(ctx, n, o)
	if err != nil {
		return nil, err
	}
	b, err := budget(n, nics, path, w)
	if err != nil {
		return nil, err
	}
	// More ports than can cross any hop of this NIC's path would count
	// ports of other cards, unhindered by this path, into its ceiling.
	most := 0
	for _, h := range b.Model.Hops {
		if h.Shared <= 0 { // a hop every port in use crosses
			most = 0
			break
		}
		most = max(most, h.Shared)
	}
	if most > 0 && b.Workload.Ports > most {
		return nil, fmt.Errorf("nicdiag: %s: %w: %d ports, but only %d share its PCIe path", n.Name, pcie.ErrInvalidWorkload, b.Workload.Ports, most)
	}
	return b, nil
}

// pathOf walks the PCIe path of a PCI NIC; nil with ErrNoPCIePath for
// anything else.
func pathOf(ctx context.Context, n *nicinfo.NIC, o options) (*pcie.Path, error) {
	if n.PCI == nil {
		return nil, fmt.Errorf("nicdiag: %s is on bus %q: %w", n.Name, n.Bus, ErrNoPCIePath)
	}
	if virtualPCI(n) {
		return nil, errVirtual(n)
	}
	return pcie.PathTo(ctx, n.PCI.Address, o.pcie()...)
}

// budget solves the model for one NIC on its path. nics are all the host's
// interfaces: they tell which functions below a hop are ports and which are
// SR-IOV virtual functions (VFs share the port's wire, not extra ports).
func budget(n *nicinfo.NIC, nics []nicinfo.NIC, path *pcie.Path, w pcie.Workload) (*Budget, error) {
	if path == nil || len(path.Hops) == 0 {
		why := "no PCIe link"
		if path != nil && path.Architectural != "" {
			why = path.Architectural
		}
		return nil, fmt.Errorf("nicdiag: %s: %s: %w", n.Name, why, ErrNoPCIePath)
	}
	if virtualPCI(n) {
		return nil, errVirtual(n)
	}
	prof, basis := pcie.ProfileFor(n.Driver, n.PCI.VendorID, n.PCI.DeviceID)
	if n.PCI.Driver != "" && n.Driver == "" {
		prof, basis = pcie.ProfileFor(n.PCI.Driver, n.PCI.VendorID, n.PCI.DeviceID)
	}
	src := "workload"
	if w.PortMbps <= 0 {
		w.PortMbps, src = portSpeed(n)
		if w.PortMbps <= 0 {
			return nil, fmt.Errorf("nicdiag: %s: link speed unknown and chip not in the known-device table; give the port speed: %w", n.Name, pcie.ErrInvalidWorkload)
		}
	}
	vf := map[string]bool{}
	for _, m := range nics {
		if m.PCI != nil && m.PCI.PhysFn != "" {
			vf[m.PCI.Address] = true
		}
	}
	links := make([]pcie.LinkParams, 0, len(path.Hops))
	for _, h := range path.Hops {
		if h.Speed <= 0 || h.Width <= 0 {
			continue // unknown hop: the model cannot use it
		}
		shared := 0
		for _, f := range h.Functions {
			if f.Network && !vf[f.Address] {
				shared++
			}
		}
		links = append(links, pcie.LinkParams{
			Addr:     h.Upstream.Address,
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
	if len(links) == 0 {
		return nil, fmt.Errorf("nicdiag: %s: no hop with a known speed and width: %w", n.Name, ErrNoPCIePath)
	}
	res, err := pcie.Solve(links, prof, w)
	if err != nil {
		return nil, fmt.Errorf("nicdiag: %s: %w", n.Name, err)
	}
	b := &Budget{
		Interface:         n.Name,
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
		b.LimitingHop = res.Hops[res.Hop].Addr
		for _, h := range path.Hops {
			if h.Upstream.Address == b.LimitingHop {
				b.LimitedBy = h.SpeedLimitedBy
				if b.LimitedBy == "" {
					b.LimitedBy = h.WidthLimitedBy
				}
			}
		}
	}
	if res.AtCapability != nil {
		b.AtCapabilityMbps = res.AtCapability.CeilingMbps
		b.AtCapabilityBound = res.AtCapability.Bound
	}
	return b, nil
}

const speedFromDriver = "link speed reported by the driver"

// portSpeed is the NIC's negotiated speed, else its chip's top speed from the
// known-device table.
func portSpeed(n *nicinfo.NIC) (float64, string) {
	if n.Link.SpeedMbps > 0 {
		return float64(n.Link.SpeedMbps), speedFromDriver
	}
	if n.PCI != nil {
		if d, ok := nicinfo.LookupDevice(n.PCI.VendorID, n.PCI.DeviceID); ok && d.MaxMbps > 0 {
			return float64(d.MaxMbps), "chip maximum from the known-device table (link speed unknown)"
		}
	}
	return 0, ""
}

func minKnown(a, b int) int {
	switch {
	case a <= 0:
		return b
	case b <= 0 || a < b:
		return a
	}
	return b
}

func rcbOf(e *pcie.End) int {
	if e.Config != nil && e.Config.Express != nil {
		return e.Config.Express.RCB
	}
	return 0
}

func errVirtual(n *nicinfo.NIC) error {
	return fmt.Errorf("nicdiag: %s is a virtual NIC (its PCIe link is emulated and its speed nominal): %w", n.Name, ErrNoPCIePath)
}

// virtualPCI reports whether a PCI NIC is a hypervisor's paravirtual device,
// whose PCIe link is emulated and whose speed is nominal.
func virtualPCI(n *nicinfo.NIC) bool {
	if n.PCI == nil {
		return false
	}
	d, ok := nicinfo.LookupDevice(n.PCI.VendorID, n.PCI.DeviceID)
	return ok && d.Kind == nicinfo.KindVirtual
}
