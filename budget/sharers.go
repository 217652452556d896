package budget

import (
	"fmt"
	"slices"

	"github.com/nicdiag/nicdiag/internal/unit"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// Sharer is a device behind a hop of the NIC's path that is not a function
// of the NIC's own card: an NVMe, a GPU, another NIC. It takes part of the
// hop when it is busy; what its own link carries is the most it can take.
type Sharer struct {
	// Hop is the upstream end of the shared hop (Budget.Hops), the CPU's
	// host bridge for a modelled chipset uplink.
	Hop pcie.Address `json:"hop"`
	// Address is the device's first function.
	Address pcie.Address `json:"address"`
	// Kind says what it is, from its class ("NVMe", "GPU", "network
	// controller").
	Kind string `json:"kind"`
	// Class is its class code.
	Class uint32 `json:"class"`
	// GTs and Width are its own link as trained; 0 when sysfs has none.
	GTs   float64 `json:"gts,omitempty"`
	Width int     `json:"width,omitempty"`
	// Gbps is its link's bandwidth per direction after line encoding,
	// capped at the hop's: the most it can take of the hop; 0 unknown.
	Gbps float64 `json:"gbps,omitempty"`
}

// Words renders it: "NVMe 0000:05:00.0 (8 GT/s x4: up to 3.9 GB/s)".
func (s Sharer) Words() string {
	if s.Gbps <= 0 {
		return fmt.Sprintf("%s %s (its link unknown)", s.Kind, s.Address)
	}
	return fmt.Sprintf("%s %s (%s GT/s x%d: up to %s)", s.Kind, s.Address, pcie.FormatGTs(s.GTs), s.Width, unit.GBps(s.Gbps/8))
}

// classKinds name the classes of the devices that share links.
var classKinds = map[uint32]string{
	0x0108: "NVMe", 0x0106: "SATA controller", 0x0107: "SAS controller", 0x0104: "RAID controller",
	0x0300: "GPU", 0x0302: "GPU", 0x0380: "display controller", 0x0c03: "USB controller",
	0x1200: "accelerator", 0x0b40: "co-processor", 0x1000: "crypto accelerator", 0x1080: "crypto accelerator",
}

// movesData reports whether class c is a device that moves bulk data over
// its link: storage, network, display, USB controllers, processors,
// encryption and processing accelerators. System peripherals, audio, SMBus
// and the like are left out: they take next to nothing.
func movesData(c uint32) bool {
	switch c >> 16 {
	case 0x01, 0x02, 0x03, 0x0b, 0x10, 0x12:
		return true
	}
	return c>>8 == 0x0c03
}

// kindOf names class c.
func kindOf(c uint32) string {
	if k, ok := classKinds[c>>8]; ok {
		return k
	}
	switch c >> 16 {
	case 0x01:
		return "storage controller"
	case 0x02:
		return "network controller"
	case 0x03:
		return "display controller"
	}
	return fmt.Sprintf("device (class %06x)", c)
}

// sharers lists, for each hop of hops, the devices below it that are not
// functions of n's own card (its PCI device) nor VFs: one per device (its
// first function), in the order the hop lists them.
func sharers(n *nicinfo.NIC, hops []pcie.Hop, vfs map[pcie.Address]bool) []Sharer {
	if n.PCI == nil {
		return nil
	}
	var out []Sharer
	for _, h := range hops {
		// The NIC's own card: its device, and a VF's physical function.
		seen := map[string]bool{n.PCI.Address.Slot(): true}
		if n.PCI.PhysFn != "" {
			seen[n.PCI.PhysFn.Slot()] = true
		}
		raw := 0.0
		if g, ok := pcie.GenBySpeed(h.Speed); ok && h.Width > 0 {
			raw = g.RawGbps(h.Width)
		}
		for _, f := range h.Functions {
			if f.Bridge || vfs[f.Address] || seen[f.Address.Slot()] || !movesData(f.Class) {
				continue
			}
			seen[f.Address.Slot()] = true
			s := Sharer{Hop: h.Upstream.Address, Address: f.Address, Kind: kindOf(f.Class), Class: f.Class}
			if l := f.Link; l != nil {
				if g, ok := pcie.GenBySpeed(l.CurrentSpeed); ok && l.CurrentWidth > 0 {
					s.GTs, s.Width, s.Gbps = l.CurrentSpeed, l.CurrentWidth, g.RawGbps(l.CurrentWidth)
					if raw > 0 {
						s.Gbps = min(s.Gbps, raw)
					}
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// SharersAt returns the sharers of the hop whose upstream end is addr.
func (b *Budget) SharersAt(addr pcie.Address) []Sharer {
	var out []Sharer
	for _, s := range b.Sharers {
		if s.Hop == addr {
			out = append(out, s)
		}
	}
	return slices.Clip(out)
}
