package nicinfo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

// readPCI reads the PCI function at kernel path dir.
func (r *reader) readPCI(ctx context.Context, bdf pcie.Address, dir string) {
	n := r.nic
	f := &PCIFunction{Address: bdf}
	n.PCI = f
	id := func(name, field string, bits int) uint32 {
		s, err := r.root.ReadString(dir + "/" + name)
		if err != nil {
			r.missing(field, err)
			return 0
		}
		v, err := parseHexID(s, bits)
		if err != nil {
			r.missing(field, err)
		}
		return v
	}
	f.VendorID = uint16(id("vendor", "pci.vendor_id", 16))
	f.DeviceID = uint16(id("device", "pci.device_id", 16))
	f.SubsystemVendor = uint16(id("subsystem_vendor", "pci.subsystem_vendor_id", 16))
	f.SubsystemDevice = uint16(id("subsystem_device", "pci.subsystem_device_id", 16))
	if f.VendorID != 0 || f.DeviceID != 0 {
		f.PCIID = fmt.Sprintf("%04x:%04x", f.VendorID, f.DeviceID)
	}
	if f.SubsystemVendor != 0 || f.SubsystemDevice != 0 {
		f.SubsystemID = fmt.Sprintf("%04x:%04x", f.SubsystemVendor, f.SubsystemDevice)
	}
	f.Class = id("class", "pci.class", 24)
	f.Revision = uint8(id("revision", "pci.revision", 8))

	if drv, err := r.readLinkBase(dir + "/driver"); err == nil {
		f.Driver = drv
	} else if !errors.Is(err, fs.ErrNotExist) {
		r.missing("pci.driver", err)
	}
	n.NUMANode = -1
	if v, err := r.root.ReadInt(dir + "/numa_node"); err != nil {
		r.missing("numa_node", err)
	} else if v >= -1 && v < 1<<16 {
		n.NUMANode = int(v)
	} else {
		r.missing("numa_node", fmt.Errorf("%w: %d", ErrMalformed, v))
	}
	if s, err := r.readText(dir + "/local_cpulist"); err != nil {
		r.missing("local_cpus", err)
	} else {
		n.LocalCPUs = s
	}
	r.readIRQs(f, dir)
	r.readSRIOV(f, dir)
	r.readPCIeLink(ctx, f)
	r.checkConfig(dir)
}

// readIRQs lists msi_irqs/, or the legacy INTx line when MSI is off.
func (r *reader) readIRQs(f *PCIFunction, dir string) {
	names, err := r.root.ReadDir(dir + "/msi_irqs")
	if err == nil {
		irqs, bad := parseIRQDir(names)
		f.IRQs = irqs
		if bad != nil {
			r.missing("pci.irqs", bad)
		}
		return
	}
	if !errors.Is(err, fs.ErrNotExist) {
		r.missing("pci.irqs", err)
		return
	}
	v, err := r.root.ReadInt(dir + "/irq")
	if err != nil {
		r.missing("pci.irqs", err)
		return
	}
	if v > 0 && v < 1<<31 {
		f.IRQs = []int{int(v)}
	}
}

// readSRIOV finds the PF of a VF (physfn) and the VFs of a PF (virtfnN).
func (r *reader) readSRIOV(f *PCIFunction, dir string) {
	if pf, err := r.root.LinkBase(dir + "/physfn"); err == nil {
		if a := pcie.Address(pf); a.Valid() {
			f.PhysFn = a
		} else {
			r.missing("pci.physfn", fmt.Errorf("%w: %q", pcie.ErrBadAddress, text.Clip(pf)))
		}
	}
	if v, err := r.root.ReadInt(dir + "/sriov_totalvfs"); err == nil && v > 0 && v < 1<<16 {
		f.TotalVFs = int(v)
	}
	names, err := r.root.ReadDir(dir)
	if err != nil {
		return
	}
	type vf struct {
		n    int
		addr pcie.Address
	}
	var vfs []vf
	for _, e := range names {
		num, ok := strings.CutPrefix(e, "virtfn")
		if !ok || !isDec(num) {
			continue
		}
		i, _ := strconv.Atoi(num)
		t, err := r.root.LinkBase(dir + "/" + e)
		if err != nil {
			continue
		}
		if a := pcie.Address(t); a.Valid() {
			vfs = append(vfs, vf{i, a})
		}
	}
	sort.Slice(vfs, func(i, j int) bool { return vfs[i].n < vfs[j].n })
	for _, v := range vfs {
		f.VFs = append(f.VFs, v.addr)
	}
}

// readPCIeLink reads the function's own link; conventional PCI has none.
func (r *reader) readPCIeLink(ctx context.Context, f *PCIFunction) {
	deadline, _ := r.root.Deadline()
	la, err := pcie.ReadLinkAttrs(ctx, f.Address, option.Root(r.root.Dir()), option.ReadDeadline(deadline))
	if err != nil {
		r.missing("pci.link", err)
		return
	}
	absent := 0
	for _, m := range la.Missing {
		if strings.HasSuffix(m, ": absent") {
			absent++
		}
	}
	if absent == 4 {
		return // conventional PCI, or a root complex integrated endpoint
	}
	for _, m := range la.Missing {
		r.nic.Missing = append(r.nic.Missing, "pci.link."+m)
	}
	la.Missing = nil
	if la.CurrentSpeed == 0 && la.CurrentWidth == 0 && la.MaxSpeed == 0 && la.MaxWidth == 0 {
		return // an SR-IOV VF reports "Unknown": it has no link of its own
	}
	f.Link = &la
}

// checkConfig names config space bytes that could not be read: without
// root the kernel gives the first 64 of 256 or 4096.
func (r *reader) checkConfig(dir string) {
	fh, err := r.root.Open(dir + "/config")
	if err != nil {
		r.missing("pci.config", err)
		return
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		r.missing("pci.config", err)
		return
	}
	if !r.root.Live() {
		if fi.Size() <= 64 {
			r.nic.Missing = append(r.nic.Missing, fmt.Sprintf("pci.config: %d bytes in the snapshot (taken without root)", fi.Size()))
		}
		return
	}
	// One byte past the 64-byte header tells root from non-root with a
	// single config access (each one can be a VM exit).
	var one [1]byte
	got, err := fh.ReadAt(one[:], 64)
	if err != nil && !errors.Is(err, io.EOF) {
		r.missing("pci.config", err)
		return
	}
	if got == 0 && fi.Size() > 64 {
		r.nic.Missing = append(r.nic.Missing, fmt.Sprintf("pci.config: needs root (64 of %d bytes readable)", fi.Size()))
	}
}
