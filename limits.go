package nicdiag

import (
	"context"
	"slices"

	"github.com/nicdiag/nicdiag/budget"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// Monitor starts a monitored run of the host's selected network
// interfaces (monitor.Start with h as the target, under h's root): their
// queues are sampled, and the run's verdict weighs them against what
// Inspect read of them (Monitored). opts are monitor's: the interval, a
// duration, a command, a record.
func (h *Host) Monitor(ctx context.Context, opts ...monitor.Option) (*monitor.Run, error) {
	return monitor.Start(ctx, h, append([]monitor.Option{option.Root(h.Root)}, opts...)...)
}

// Monitored makes h a monitor.Target: its selected network interfaces,
// and for each the run verdict's inputs: its line rate when the driver's
// speed is a measurement, its PCIe path and DMA profile for the budget
// model, the ends of every hop, its USB bus speed, what a misidentified
// device really is, and on a host of several NUMA nodes the NIC's node
// and CPUs.
func (h *Host) Monitored() ([]nicinfo.NIC, []monitor.Limits) {
	var nics []nicinfo.NIC
	var out []monitor.Limits
	for _, n := range h.Selected {
		if !n.Netdev() {
			continue
		}
		nics = append(nics, n.NIC)
		// An emulated NIC's speed is the hypervisor's figure, as a virtual one's.
		l := monitor.Limits{NIC: n.Name, Virtual: n.Virtual || nicinfo.Label(n.NIC) == nicinfo.LabelEmulated, MTU: n.MTU}
		if n.PCI != nil {
			l.Address = n.PCI.Address.String()
		}
		id := h.ident[n.Name]
		if id != nil {
			l.RealDevice, l.BoundBy, l.MovesMbps = id.RealDevice, id.BoundBy, float64(id.MovesMbps)
			if l.RealDevice == "" {
				l.RealDevice = "not the chip its PCI ID names (nic.misidentified)"
			}
		}
		if n.Link.SpeedMbps > 0 && id == nil && !l.Virtual {
			l.PortMbps = float64(n.Link.SpeedMbps)
		}
		if local, err := irq.ParseCPUList(n.LocalCPUs); err == nil && len(local) > 0 && n.NUMANode >= 0 && h.severalNodes(n.NUMANode, len(local)) {
			l.NUMANode, l.LocalCPUs = n.NUMANode, n.LocalCPUs
		}
		if n.USB != nil {
			l.USBMbps = float64(n.USB.SpeedMbps)
		}
		if n.Budget != nil {
			if links, p, ok := n.Budget.Inputs(); ok {
				// The modelled chipset uplink (a datasheet's figure) is
				// no run limit: a run is judged against links sysfs shows.
				if c := n.Budget.Chipset(); c != nil {
					links = slices.DeleteFunc(links, func(l budget.LinkParams) bool { return l.Addr == string(c.Upstream.Address) })
				}
				l.Links, l.Profile = links, &p
			}
		}
		if n.Path != nil {
			l.Path = append(l.Path, n.Path.Device.Address.String())
			for _, hop := range n.Path.Hops {
				for _, a := range []string{hop.Downstream.Address.String(), hop.Upstream.Address.String()} {
					if a != "" && !slices.Contains(l.Path, a) {
						l.Path = append(l.Path, a)
					}
				}
			}
		}
		out = append(out, l)
	}
	return nics, out
}

// severalNodes reports whether the host has more than one NUMA node, as a
// NIC on node (whose node has local CPUs) shows it: a node above 0, or
// fewer local CPUs than the host has online.
func (h *Host) severalNodes(node, local int) bool {
	switch {
	case node > 0:
		return true
	case h.Interrupts != nil:
		return local < len(h.Interrupts.CPUs)
	case h.CPUs != nil:
		return local < len(h.CPUs.CPUs)
	}
	return false
}
