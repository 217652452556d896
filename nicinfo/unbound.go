package nicinfo

// Why ghw here: NoNetdev has to enumerate every PCI device under the root,
// netdev or not, and github.com/jaypipes/ghw's pci package does exactly that
// (address, class, driver, IOMMU group, parent) against a chroot, which is
// how nicdiag reads snapshots. It is used only for that enumeration, with its
// known traps avoided (docs/dependencies.md §1):
//   - an empty pcidb.PCIDB is passed, so ghw never parses all of pci.ids
//     (40-85 ms); names come from the package's own pci.ids scanner;
//   - topology detection, external tools and warnings (which ghw would log
//     to stderr) are off, and the chroot is set explicitly so GHW_CHROOT in
//     the environment has no say;
//   - ghw returns no devices at all when any one device has an unparsable
//     address or an empty or short modalias; NoNetdev detects that (zero
//     devices from a non-empty /sys/bus/pci/devices) and lists the
//     directory itself, saying so in each function's Warnings.
// Everything else (IDs, driver, PCIe link, NUMA, IRQs, SR-IOV) is read with
// the same sysfs reader List uses.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/jaypipes/ghw"
	"github.com/jaypipes/ghw/pkg/pci"
	"github.com/jaypipes/pcidb"
	"github.com/nicdiag/nicdiag/internal/fsroot"
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
	// Missing names what could not be read, as in NIC.Missing.
	Missing []string `json:"missing,omitempty"`
	// Warnings say how the function was found when ghw's enumeration
	// failed and the directory was read instead.
	Warnings []string `json:"warnings,omitempty"`
}

// Note is "no netdev (DRIVER)" for a function bound to a driver, or "no
// driver" for an unbound one.
func (f *NoNetdevFunction) Note() string {
	if f.Driver == "" {
		return "no driver"
	}
	return "no netdev (" + f.Driver + ")"
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
	cands, fallback, err := pciCandidates(ctx, o)
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
		fn := readNoNetdev(ctx, o, c.Address, c.IOMMUGroup, &q)
		if fallback != "" {
			fn.Warnings = []string{fallback}
		}
		out = append(out, fn)
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
		IOMMUGroup: iommu, Missing: n.Missing}
}

// pciCandidates lists the network-class functions (address and IOMMU group
// filled in, nothing else) from ghw, or from the directory when ghw cannot
// be used or lists nothing; fallback then says why, for each function's
// Warnings. An empty list is never nil.
func pciCandidates(ctx context.Context, o options) (cands []NoNetdevFunction, fallback string, err error) {
	unsafe := ""
	if !o.root.Live() {
		unsafe = ghwUnsafe(o)
	}
	if unsafe == "" {
		info, err := pci.New(ctx,
			ghw.WithChroot(o.root.Dir()),
			ghw.WithPCIDB(&pcidb.PCIDB{}),
			ghw.WithDisableTopology(),
			ghw.WithDisableTools(),
			ghw.WithDisableWarnings(),
		)
		if err != nil {
			return nil, "", fmt.Errorf("listing PCI devices: %w", err)
		}
		if len(info.Devices) > 0 {
			cands = []NoNetdevFunction{}
			for _, d := range info.Devices {
				if d.Class != nil && d.Class.ID == "02" {
					cands = append(cands, candidate(pcie.Address(strings.ToLower(d.Address)), text.Clean(d.IOMMUGroup)))
				}
			}
			return cands, "", nil
		}
	}
	entries, err := o.root.ReadDir("/sys/bus/pci/devices")
	if errors.Is(err, fs.ErrNotExist) {
		return []NoNetdevFunction{}, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("listing PCI devices: %w", err)
	}
	switch {
	case unsafe != "":
		fallback = "found by reading /sys/bus/pci/devices: ghw not used (" + unsafe + ")"
	case len(entries) > 0:
		fallback = fallbackNote(o, entries)
	}
	cands = []NoNetdevFunction{}
	for _, e := range entries {
		a := pcie.Address(e)
		if !a.Valid() {
			continue
		}
		if c, err := o.root.ReadHex("/sys/bus/pci/devices/" + e + "/class"); err == nil && c>>16 == 0x02 {
			g, _ := o.root.LinkBase("/sys/bus/pci/devices/" + e + "/iommu_group")
			cands = append(cands, candidate(a, text.Clean(g)))
		}
	}
	return cands, fallback, nil
}

func candidate(a pcie.Address, iommu string) NoNetdevFunction {
	return NoNetdevFunction{PCIFunction: PCIFunction{Address: a}, IOMMUGroup: iommu}
}

// ghwFiles are the files ghw reads with plain os calls under each
// /sys/bus/pci/devices entry; maxGHWFile bounds them.
var ghwFiles = []string{"modalias", "revision", "numa_node"}

const maxGHWFile = 4096

// refused reports a read fsroot refused by rule (a link out of the root, a
// file that is not regular), as opposed to one the system denied.
func refused(err error) bool {
	return errors.Is(err, fsroot.ErrEscape) || errors.Is(err, fsroot.ErrNotRegular)
}

// ghwUnsafe says why ghw must not read a snapshot, or "": ghw follows
// symlinks with plain os calls and reads whole files, so an entry or file
// that leaves the root, a FIFO (which would block it for ever) or an
// oversized file keeps it out, and the directory is read through the root
// instead.
func ghwUnsafe(o options) string {
	const dir = "/sys/bus/pci/devices"
	entries, err := o.root.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		return dir + ": " + reason(err)
	}
	for _, e := range entries {
		if _, err := o.root.Realpath(dir + "/" + e); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return text.Clip(e) + ": " + reason(err)
		}
		for _, name := range ghwFiles {
			f, err := o.root.Open(dir + "/" + e + "/" + name)
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) && !refused(err) {
				continue // ghw fails on it too, and harmlessly
			}
			if err == nil {
				fi, serr := f.Stat()
				f.Close()
				if serr == nil && fi.Size() <= maxGHWFile {
					continue
				}
				err = fsroot.ErrTooLarge
			}
			return text.Clip(e) + "/" + name + ": " + reason(err)
		}
	}
	return ""
}

// fallbackNote says why ghw listed nothing from a non-empty directory,
// naming the first device it would have stumbled on.
func fallbackNote(o options, entries []string) string {
	why := "a device has an unparsable address or an empty or malformed modalias"
	for _, e := range entries {
		if !pcie.Address(e).Valid() {
			why = fmt.Sprintf("entry %q is not a PCI address", text.Clip(e))
			break
		}
		m, err := o.root.ReadString("/sys/bus/pci/devices/" + e + "/modalias")
		if err != nil || len(m) < len("pci:v00008086d000010C9sv00008086sd0000A03Cbc02sc00i00") {
			why = e + " has an empty or malformed modalias"
			break
		}
	}
	return "found by reading /sys/bus/pci/devices: ghw listed no PCI devices (" + why + ")"
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
