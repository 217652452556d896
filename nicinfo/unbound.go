package nicinfo

// How the functions are found: by listing /sys/bus/pci/devices through the
// root and keeping class 0x02xxxx. github.com/jaypipes/ghw's pci package
// enumerates the same functions (it is this file's test oracle,
// TestNoNetdevMatchesGHW), but it is kept off this path: its enumeration cost
// 0.9 ms against 0.33 ms for the listing, its package init another 0.5 ms
// in every command, it reads files with plain os calls that a snapshot's
// symlinks and FIFOs can subvert, and one device with an empty modalias
// makes it return no devices at all (docs/dependencies.md §1).
// Everything else (IDs, driver, PCIe link, NUMA, IRQs, SR-IOV) is read with
// the same sysfs reader List uses.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/pcie"
)

// NoNetdevFunction is a network-class PCI function (class 0x02xxxx) that has
// no network interface: one bound to a userspace I/O driver (vfio-pci,
// uio_pci_generic, igb_uio, as DPDK uses them), to a driver that made no
// netdev, or to no driver at all. The PCIFunction fields are inline in JSON.
type NoNetdevFunction struct {
	PCIFunction
	// NUMANode is -1 when the platform has no NUMA information.
	NUMANode  int    `json:"numa_node"`
	LocalCPUs string `json:"local_cpus,omitempty"`
	// IOMMUGroup is the function's IOMMU group number ("" without one);
	// vfio-pci needs one.
	IOMMUGroup string `json:"iommu_group,omitempty"`
	// OtherNetns is set when the function has a netdev that is not in the
	// network namespace the root's sysfs shows (nicdiag runs in a
	// container or `ip netns exec`): its net directory is there, empty.
	OtherNetns bool `json:"netdev_in_other_netns,omitempty"`
	// Missing names what could not be read, as in NIC.Missing.
	Missing []string `json:"missing,omitempty"`
}

// Note is "no netdev (DRIVER)" for a function bound to a driver, "netdev
// in another network namespace (DRIVER)" for one whose netdev this
// namespace does not see, or "no driver" for an unbound one.
func (f *NoNetdevFunction) Note() string {
	switch {
	case f.Driver == "":
		return "no driver"
	case f.OtherNetns:
		return "netdev in another network namespace (" + f.Driver + ")"
	}
	return "no netdev (" + f.Driver + ")"
}

// netdevElsewhere reports whether the function at dir has a netdev sysfs
// does not show: the kernel makes the net directory (under the function,
// or under its virtioN child) with the first netdev, and a namespace's
// sysfs lists only its own netdevs in it.
func netdevElsewhere(o options, dir string) bool {
	dirs := []string{dir + "/net"}
	if ents, err := o.root.ReadDir(dir); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e, "virtio") {
				dirs = append(dirs, dir+"/"+e+"/net")
			}
		}
	}
	for _, d := range dirs {
		if ents, err := o.root.ReadDir(d); err == nil && len(ents) == 0 {
			return true
		}
	}
	return false
}

// NoNetdev returns every network-class PCI function under the root that has
// no network interface, sorted by address: the NICs that List cannot see
// because no netdev exists for them. A root without /sys/bus/pci/devices
// has none. It fails only when ctx is done or the PCI devices cannot be
// listed at all; what cannot be read about one function is named in its
// Missing.
func NoNetdev(ctx context.Context, opts ...Option) ([]NoNetdevFunction, error) {
	o := buildOptions(opts)
	if err := ctx.Err(); err != nil {
		return nil, wrapErr(err)
	}
	cands, err := pciCandidates(o)
	if err != nil || len(cands) == 0 {
		return cands, wrapErr(err)
	}
	withNetdev := netdevFunctions(o)
	out := []NoNetdevFunction{}
	var q PCIQuery
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, wrapErr(err)
		}
		if withNetdev[c.Address] {
			continue
		}
		out = append(out, readNoNetdev(ctx, o, c.Address, c.IOMMUGroup, &q))
	}
	if q.vendors != nil {
		names, err := loadPCINames(o.root, o.pciIDs, &q)
		for i := range out {
			if err != nil {
				out[i].Missing = append(out[i].Missing, "pci.names: "+namesReason(err))
				continue
			}
			names.fill(&out[i].PCIFunction)
		}
	}
	for i := range out {
		sort.Strings(out[i].Missing)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out, nil
}

// readNoNetdev reads one function with List's sysfs reader and adds its IDs
// to q.
func readNoNetdev(ctx context.Context, o options, addr pcie.Address, iommu string, q *PCIQuery) NoNetdevFunction {
	n := NIC{Bus: BusPCI, NUMANode: -1}
	r := reader{root: o.root, nic: &n}
	dir, err := o.root.Realpath("/sys/bus/pci/devices/" + string(addr))
	if err != nil {
		r.missing("sysfs", err)
		n.PCI = &PCIFunction{Address: addr}
	} else {
		r.readPCI(ctx, addr, dir)
		f := n.PCI
		q.Add(f.VendorID, f.DeviceID, f.SubsystemVendor, f.SubsystemDevice, f.Class)
	}
	return NoNetdevFunction{PCIFunction: *n.PCI, NUMANode: n.NUMANode, LocalCPUs: n.LocalCPUs,
		IOMMUGroup: iommu, Missing: n.Missing, OtherNetns: err == nil && n.PCI.Driver != "" && netdevElsewhere(o, dir)}
}

// pciCandidates lists the network-class functions under /sys/bus/pci/devices
// with their IOMMU groups; a root without that directory has none.
func pciCandidates(o options) ([]NoNetdevFunction, error) {
	entries, err := o.root.ReadDir("/sys/bus/pci/devices")
	if errors.Is(err, fs.ErrNotExist) {
		return []NoNetdevFunction{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing PCI devices: %w", err)
	}
	cands := []NoNetdevFunction{}
	for _, e := range entries {
		a := pcie.Address(e)
		if !a.Valid() {
			continue
		}
		if c, err := o.root.ReadHex("/sys/bus/pci/devices/"+e+"/class", 6); err == nil && c>>16 == 0x02 {
			g, _ := o.root.LinkBase("/sys/bus/pci/devices/" + e + "/iommu_group")
			cands = append(cands, NoNetdevFunction{PCIFunction: PCIFunction{Address: a}, IOMMUGroup: text.Clean(g)})
		}
	}
	return cands, nil
}

// netdevFunctions returns the PCI addresses some network interface sits
// on, from the /sys/class/net links: the function itself and the bridges
// above it (a virtio netdev hangs off virtioN under its function).
func netdevFunctions(o options) map[pcie.Address]bool {
	out := map[pcie.Address]bool{}
	names, err := o.root.ReadDir("/sys/class/net")
	if err != nil {
		return out
	}
	for _, name := range names {
		t, err := o.root.Readlink("/sys/class/net/" + name)
		if err != nil {
			continue
		}
		for _, e := range strings.Split(t, "/") {
			if a := pcie.Address(e); a.Valid() {
				out[a] = true
			}
		}
	}
	return out
}
