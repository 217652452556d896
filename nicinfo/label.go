package nicinfo

import "slices"

// The one classifier of what a NIC is: Label, and IsVirtual on top of it.
// Every check in this package that skips virtual, emulated or SR-IOV
// functions asks it (through nominal and sriovVF) rather than keeping a list
// of its own.

// Labels returned by Label.
const (
	LabelVirtual  = "virtual"  // paravirtual or software interface: speed nominal
	LabelEmulated = "emulated" // a hypervisor's model of a real chip
	LabelUSB      = "usb"      // a USB network adapter
	LabelVF       = "vf"       // an SR-IOV virtual function
)

// virtualDrivers are netdev or PCI drivers that only ever drive a
// hypervisor's NIC.
var virtualDrivers = []string{"virtio_net", "virtio-pci", "hv_netvsc", "vmxnet3", "ena",
	"gve", "vif", "xen-netfront", "veth", "tun", "bridge", "bonding", "dummy"}

// Label returns a short tag for list and show output: LabelVirtual,
// LabelEmulated, LabelUSB, LabelVF, or "" for a physical function of a
// real chip. Virtual and emulated NICs get no identity or PCIe verdicts:
// their speed is nominal and their PCIe link emulated.
func Label(n NIC) string {
	row, known := ChipOf(n)
	switch {
	case n.Bus == BusVirtual, known && row.Kind == KindVirtual,
		slices.Contains(virtualDrivers, n.Driver),
		n.PCI != nil && slices.Contains(virtualDrivers, n.PCI.Driver):
		return LabelVirtual
	case emulated(n):
		return LabelEmulated
	case n.Bus == BusUSB:
		return LabelUSB
	case sriovVF(n, row, known):
		return LabelVF
	}
	return ""
}

// IsVirtual reports whether n is a paravirtual or software interface
// (Label's LabelVirtual): its speed is nominal and its PCIe link, if any,
// emulated. It is the one test of virtual-ness the packages share.
func IsVirtual(n *NIC) bool { return Label(*n) == LabelVirtual }

// nominal reports whether n's speed and PCIe link are a hypervisor's
// figures (Label's LabelVirtual or LabelEmulated): no identity or link-mode
// check applies to it.
func nominal(n NIC) bool {
	switch Label(n) {
	case LabelVirtual, LabelEmulated:
		return true
	}
	return false
}

// sriovVF reports an SR-IOV virtual function: one with a physfn link, or
// whose ID the known-device table (row, as ChipOf returns it) lists as a
// VF. Label's LabelVF is this, for NICs that are neither virtual, emulated
// nor on USB.
func sriovVF(n NIC, row KnownDevice, known bool) bool {
	return n.PCI != nil && (n.PCI.PhysFn != "" || known && row.Kind == KindVF)
}

// emulated reports a hypervisor's model of a real chip: QEMU gives its
// devices subsystem 1af4:1100, VMware gives its own 15ad; neither makes
// hardware. A model that keeps the chip maker's subsystem vendor is marked
// by markEmulated (PCIFunction.Emulator).
func emulated(n NIC) bool {
	if n.PCI == nil {
		return false
	}
	sv := n.PCI.SubsystemVendor
	return (sv == 0x1af4 || sv == 0x15ad) && sv != n.PCI.VendorID || n.PCI.Emulator != ""
}

// qemuE1000e reports whether f carries the IDs QEMU's e1000e model gives
// itself: Intel's 82574L (8086:10d3) with subsystem 8086:0000, the
// defaults of its subsys_ven and subsys properties (QEMU's
// hw/net/e1000e.c, e1000e_properties). The 82574L's own default subsystem
// is the same, so these IDs mark the model only on a QEMU guest.
func qemuE1000e(f *PCIFunction) bool {
	return f != nil && f.VendorID == 0x8086 && f.DeviceID == 0x10d3 &&
		f.SubsystemVendor == 0x8086 && f.SubsystemDevice == 0
}

// markEmulated sets Emulator on each function whose IDs are a QEMU
// model's only on a QEMU guest (qemuE1000e), when the DMI strings under
// the root name QEMU. They are read only when such a function is there.
func markEmulated(o options, nics []NIC) {
	var cand []*PCIFunction
	for i := range nics {
		if qemuE1000e(nics[i].PCI) {
			cand = append(cand, nics[i].PCI)
		}
	}
	if len(cand) == 0 {
		return
	}
	if hv, _ := classifyPlatform(readDMI(o)); hv == HypervisorQEMU {
		for _, f := range cand {
			f.Emulator = HypervisorQEMU
		}
	}
}
