package nicdiag

import (
	"context"
	"errors"
	"fmt"

	"github.com/nicdiag/nicdiag/budget"
)

// ErrNotInspected is returned by Host.Explain for a NIC whose path the Host
// did not read.
var ErrNotInspected = errors.New("not inspected")

// Explain computes the throughput budget of the NIC called name for
// workload w. Zero fields of w take the defaults: 1518-byte frames, both
// directions, every port sharing the narrowest link, each at the
// interface's link speed.
//
// name may be an interface, the PCI address of an interface's function, or
// the PCI address of a network-class function without a netdev (see
// nicinfo.NoNetdev): its budget uses its PCI driver's DMA profile
// (vfio-pci and the other DPDK drivers: the DPDK poll-mode profile) and,
// unless w gives a port speed, the chip's top speed from the known-device
// table; Budget.Interface is then the address. A NIC with nothing to model
// (virtual, on USB, a MAC inside the chipset) gets a budget without a PCIe
// stage (see budget.For).
func Explain(ctx context.Context, name string, w budget.Workload, opts ...Option) (*budget.Budget, error) {
	h, err := Inspect(ctx, append(opts, WithInterfaces(name))...)
	if err != nil {
		return nil, err
	}
	return h.Explain(name, w)
}

// Explain computes the budget of the NIC called name (see Lookup) for
// workload w from the facts h holds.
func (h *Host) Explain(name string, w budget.Workload) (*budget.Budget, error) {
	n, err := h.Lookup(name)
	if err != nil {
		return nil, err
	}
	if n.Judged() && n.Path == nil {
		for _, u := range h.Unread {
			if u.Part == PartPath && u.Subject == n.ID() {
				return nil, u.Err
			}
		}
		return nil, fmt.Errorf("nicdiag: %s: %w: the Host holds no PCIe path for it (inspected with WithInventoryOnly, or not among WithInterfaces)", n.ID(), ErrNotInspected)
	}
	b, err := h.budgetFor(n, n.Path, w)
	if err != nil {
		return nil, fmt.Errorf("nicdiag: %w", err)
	}
	// More ports than can cross any hop of this NIC's path would count
	// ports of other cards, unhindered by this path, into its ceiling.
	if most := b.MostPorts(); most > 0 && b.Workload.Ports > most {
		return nil, fmt.Errorf("nicdiag: %s: %w: %d ports, but only %d share its PCIe path", n.ID(), budget.ErrInvalidWorkload, b.Workload.Ports, most)
	}
	return b, nil
}
