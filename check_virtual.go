package nicdiag

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// virtualCheck: virtual and cloud NICs. An emulated chip on a virtual
// machine (nic.emulated): the hypervisor models an e1000, RTL8139, PCnet or
// DEC 21140 register by register, so every packet traps into it, where a
// paravirtual NIC (virtio-net, vmxnet3, netvsc, ENA, gVNIC) shares rings
// with the host. A virtio_net NIC whose device offers one queue pair on a
// VM with more vCPUs (nic.virtio_single_queue): the guest cannot add queues,
// the host must. An SR-IOV VF whose PF caps its transmit rate
// (nic.vf_rate_limited, `ip link set PF vf N max_tx_rate R`).
var virtualCheck = Checker{
	Name:  "virtual",
	Codes: []finding.Code{finding.NICEmulated, finding.NICVirtioSingleQueue, finding.NICVFRateLimited},
	Run: func(h *Host) []finding.Finding {
		out := perNIC(h, h.emulatedNIC, h.virtioSingleQueue)
		// Every PF, selected or not: the finding is about its VF, which
		// Check keeps when the VF (or, for a VF not on this host, the PF)
		// is selected.
		for _, n := range h.NICs {
			out = append(out, h.vfRateLimits(n)...)
		}
		return out
	},
}

// vmOnlyChips are chips that hypervisors still present and that no one
// passes through any more (conventional-PCI parts of 1995-2003): on a VM,
// one of these is the hypervisor's model. QEMU's e1000 is the 82540EM,
// VMware's the 82545EM, VirtualBox offers both and the 82543GC and the
// PCnet, Hyper-V's legacy network adapter is the DEC 21140.
var vmOnlyChips = map[[2]uint16]string{
	{0x8086, 0x100e}: "Intel 82540EM",
	{0x8086, 0x100f}: "Intel 82545EM",
	{0x8086, 0x1004}: "Intel 82543GC",
	{0x10ec, 0x8139}: "Realtek RTL8139",
	{0x10ec, 0x8029}: "Realtek RTL8029 (NE2000)",
	{0x1022, 0x2000}: "AMD PCnet (Am79C970A/Am79C973)",
	{0x1011, 0x0009}: "DEC 21140 (Hyper-V legacy network adapter)",
}

// emulatedBecause says why n is a hypervisor's model of a chip, or "".
// A real chip passed through to a VM keeps its maker's subsystem ID and is
// not one: QEMU and VMware write their own subsystem vendor (1af4, 15ad)
// into the chips they model (nicinfo.LabelEmulated), except QEMU's e1000e,
// which says 8086:0000 and is known by the platform (PCIFunction.Emulator).
func (h *Host) emulatedBecause(n *NIC) string {
	p := n.PCI
	if p == nil || !n.Netdev() {
		return ""
	}
	switch {
	case p.Emulator != "":
		return fmt.Sprintf("its subsystem ID %04x:%04x is what %s's model of the chip reports, on a %s guest", p.SubsystemVendor, p.SubsystemDevice, p.Emulator, p.Emulator)
	case nicinfo.Label(n.NIC) == nicinfo.LabelEmulated:
		return fmt.Sprintf("its subsystem ID %04x:%04x is the hypervisor's, not the chip maker's", p.SubsystemVendor, p.SubsystemDevice)
	case h.Platform.VM && vmOnlyChips[[2]uint16{p.VendorID, p.DeviceID}] != "":
		return "no real one of this chip is passed through to VMs any more; hypervisors present it as their emulated NIC"
	}
	return ""
}

// emulatedNIC reports nic.emulated: warn, info when the interface is down
// (it carries nothing now).
func (h *Host) emulatedNIC(n *NIC) (finding.Finding, bool) {
	why := h.emulatedBecause(n)
	if why == "" {
		return finding.Finding{}, false
	}
	p := n.PCI
	chip := chipName(n)
	alt, fix := paravirtual(h.Platform)
	sev := finding.Warn
	if n.OperState == nicinfo.OperDown || n.OperState == nicinfo.OperLowerLayerDown {
		sev = finding.Info
	}
	ev := map[string]string{
		"driver":      n.Driver,
		"chip":        chip,
		"pci_id":      p.PCIID,
		"subsystem":   p.SubsystemID,
		"emulated":    why,
		"hypervisor":  hypervisorName(h.Platform),
		"vm_signals":  vmSignals(h.Platform),
		"paravirtual": alt,
	}
	if n.Link.SpeedMbps > 0 {
		ev["link_mbps"] = strconv.Itoa(n.Link.SpeedMbps) + " (nominal: the hypervisor's figure)"
	}
	return finding.Finding{
		Code:     finding.NICEmulated,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s is an emulated %s (driver %s) on %s: the hypervisor models the chip register by register, so every packet is emulated in the hypervisor, at a cost in CPU and throughput that %s does not have",
			n.Name, chip, n.Driver, onWhat(h.Platform), alt),
		Fix:      fix,
		Evidence: ev,
	}, true
}

// chipName names the chip a NIC presents, the same live and from a
// snapshot (which has no pci.ids): vmOnlyChips, the known-device table,
// pci.ids, the ID.
func chipName(n *NIC) string {
	p := n.PCI
	if c := vmOnlyChips[[2]uint16{p.VendorID, p.DeviceID}]; c != "" {
		return c
	}
	if row, ok := nicinfo.ChipOf(n.NIC); ok && row.Family != "" {
		name := row.Family
		if !strings.Contains(name, row.Chip) {
			name = row.Chip + " (" + row.Family + ")"
		}
		if row.Kind == nicinfo.KindVF {
			name += " VF"
		}
		return name
	}
	if p.DeviceName != "" {
		return p.DeviceName
	}
	return p.PCIID
}

// paravirtual names the hypervisor's paravirtual NIC and how to switch to
// it.
func paravirtual(p nicinfo.Platform) (alt, fix string) {
	switch p.Hypervisor {
	case nicinfo.HypervisorVMware:
		return "VMXNET3 (vmxnet3)", "Change the adapter type to VMXNET3 (vSphere: Edit Settings, Network adapter, Adapter Type; in the .vmx: ethernetN.virtualDev = \"vmxnet3\"); Linux drives it with vmxnet3."
	case nicinfo.HypervisorHyperV:
		return "the synthetic network adapter (hv_netvsc)", "Replace the Legacy Network Adapter with a Network Adapter (PowerShell on the host: Add-VMNetworkAdapter -VMName VM -SwitchName SWITCH, then Remove-VMNetworkAdapter the legacy one); Linux drives it with hv_netvsc."
	case nicinfo.HypervisorEC2:
		return "ENA (ena)", "Use an instance type with ENA networking (Nitro) and the ena driver (aws ec2 modify-instance-attribute --instance-id ID --ena-support)."
	case nicinfo.HypervisorGCE:
		return "gVNIC (gve) or virtio-net", "Create the instance with a paravirtual NIC: gcloud compute instances create ... --network-interface=nic-type=GVNIC (or VIRTIO_NET)."
	case nicinfo.HypervisorVirtualBox:
		return "virtio-net", "Set the adapter type to Paravirtualized Network (virtio-net): VBoxManage modifyvm VM --nictype1 virtio (N for adapter N)."
	case nicinfo.HypervisorXen:
		return "the Xen PV NIC (xen-netfront)", "Give the guest a paravirtual vif (xl.cfg: vif = ['type=vif,...']); an HVM guest's emulated NIC is unplugged once its xen-netfront driver loads."
	case nicinfo.HypervisorParallels:
		return "virtio-net", "Set the adapter type to virtio: prlctl set VM --device-set netN --adapter-type virtio."
	}
	return "virtio-net", "Switch the NIC model to virtio-net: libvirt <model type='virtio'/> in the <interface> element (virsh edit VM, then restart it); QEMU -netdev tap,id=ID,vhost=on -device virtio-net-pci,netdev=ID; OpenStack: the image property hw_vif_model=virtio. Linux drives it with virtio_net."
}

// hypervisorName is the platform's hypervisor for evidence.
func hypervisorName(p nicinfo.Platform) string {
	switch {
	case p.Hypervisor != "":
		return p.Hypervisor
	case p.VM:
		return "not named (only the CPU's hypervisor flag says VM)"
	}
	return "none detected"
}

// onWhat words the machine for a sentence: "a QEMU virtual machine".
func onWhat(p nicinfo.Platform) string {
	switch {
	case p.Hypervisor != "":
		return "a " + p.Hypervisor + " virtual machine"
	case p.VM:
		return "a virtual machine"
	}
	return "a hypervisor's virtual machine"
}

// vmSignals lists what says the host is a VM.
func vmSignals(p nicinfo.Platform) string {
	var s []string
	if p.SysVendor != "" {
		s = append(s, "sys_vendor "+strconv.Quote(p.SysVendor))
	}
	if p.ProductName != "" {
		s = append(s, "product_name "+strconv.Quote(p.ProductName))
	}
	if p.HypervisorType != "" {
		s = append(s, "/sys/hypervisor/type "+p.HypervisorType)
	}
	if p.CPUFlag {
		s = append(s, "cpuinfo flag hypervisor")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "; ")
}

// cpuCount is the host's CPU count: /proc/interrupts' columns, else
// /proc/cpuinfo's processors, else (a snapshot without /proc) at least the
// CPUs local to n's PCI function; 0 when none of them was read.
func (h *Host) cpuCount(n *NIC) int {
	if h.Interrupts != nil && len(h.Interrupts.CPUs) > 0 {
		return len(h.Interrupts.CPUs)
	}
	if h.Platform.CPUs > 0 {
		return h.Platform.CPUs
	}
	if local, err := irq.ParseCPUList(n.LocalCPUs); err == nil {
		return len(local)
	}
	return 0
}

// virtioSingleQueue reports nic.virtio_single_queue: a virtio_net NIC whose
// device does not offer VIRTIO_NET_F_MQ, or offers one queue pair (channel
// maximum 1), on a host with two or more CPUs. Warn, info when the device
// reports a speed under 1 Gb/s. nic.single_queue stays silent for such a
// NIC (queueCountFixed): its "raise the queue count or enable RPS" would
// send the reader to the guest, where the count cannot be changed.
func (h *Host) virtioSingleQueue(n *NIC) (finding.Finding, bool) {
	if !n.Netdev() || n.Driver != "virtio_net" {
		return finding.Finding{}, false
	}
	cpus := h.cpuCount(n)
	if cpus < 2 {
		return finding.Finding{}, false
	}
	mq, known := n.Virtio.Feature(nicinfo.VirtioNetFMQ)
	c := n.NIC.Queues.Channels
	maxQ := 0
	if c != nil {
		maxQ = max(c.MaxCombined, c.MaxRX)
	}
	dev := "its virtio device"
	if n.Virtio != nil {
		dev = n.Virtio.Name
	}
	var why string
	switch {
	case known && !mq && maxQ <= 1:
		why = fmt.Sprintf("its virtio device %s does not offer multiqueue (VIRTIO_NET_F_MQ, feature bit %d, is clear in its features)", dev, nicinfo.VirtioNetFMQ)
	case c != nil && maxQ == 1:
		why = fmt.Sprintf("its virtio device %s offers one queue pair (ethtool -l: combined maximum 1)", dev)
	default:
		return finding.Finding{}, false
	}
	sev := finding.Warn
	if n.Link.SpeedMbps > 0 && n.Link.SpeedMbps < 1000 {
		sev = finding.Info
	}
	ev := map[string]string{
		"virtio_device": dev,
		"vcpus":         strconv.Itoa(cpus),
		"hypervisor":    hypervisorName(h.Platform),
		"rps":           "off",
	}
	switch {
	case !known:
		ev["virtio_mq"] = "unknown (features not read)"
	case mq:
		ev["virtio_mq"] = "offered"
	default:
		ev["virtio_mq"] = "not offered"
	}
	if c != nil {
		ev["channels"] = fmt.Sprintf("combined %d (max %d)", c.Combined, c.MaxCombined)
	}
	if n.NIC.Queues.RPS || n.Steering.RPSOn() {
		ev["rps"] = "on"
	}
	vectors := 2*cpus + 2
	return finding.Finding{
		Code:     finding.NICVirtioSingleQueue,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s (virtio_net) has one queue pair because %s: on this %d-vCPU VM one vCPU takes every receive interrupt and one host thread serves the queue; the guest cannot add queues, the host must",
			n.Name, why, cpus),
		Fix: fmt.Sprintf("On the host, not in the guest: give the NIC %[1]d queue pairs (one per vCPU). libvirt: <driver name='vhost' queues='%[1]d'/> in the <interface> element (virsh edit VM, then a full stop and start); QEMU: -netdev tap,id=ID,vhost=on,queues=%[1]d -device virtio-net-pci,netdev=ID,mq=on,vectors=%[2]d (2N+2); on a cloud instance the queue count follows the instance type. Some VMMs (Firecracker) offer no virtio-net multiqueue at all. The guest uses the new queues at boot (else ethtool -L %[3]s combined %[1]d). RPS in the guest spreads only the protocol work, not the one queue the host serves.",
			cpus, vectors, n.Name),
		Evidence: ev,
	}, true
}

// vfSingleByDesign reports an SR-IOV VF whose queue count is not the
// guest's or host's to raise: igbvf always has one queue pair (82576 and
// I350 VFs: three MSI-X vectors, rx, tx and the PF mailbox), ixgbevf takes
// the count its PF's mailbox gives and has no ethtool -L, and any VF whose
// channel maximum is 1 has no more.
func vfSingleByDesign(n *NIC) bool {
	if !isVF(n) {
		return false
	}
	if c := n.NIC.Queues.Channels; c != nil {
		return c.MaxCombined+c.MaxRX <= 1
	}
	switch n.Driver {
	case "igbvf", "ixgbevf":
		return true
	}
	return false
}

// isVF reports an SR-IOV virtual function: one with a physfn link (on the
// host that owns the PF), or whose ID the known-device table lists as a VF
// (passed through to a guest), emulated or not.
func isVF(n *NIC) bool {
	if n.PCI == nil {
		return false
	}
	row, known := nicinfo.ChipOf(n.NIC)
	return n.PCI.PhysFn != "" || known && row.Kind == nicinfo.KindVF
}

// queueCountFixed reports a NIC whose single queue nic.single_queue does
// not judge: a virtio NIC whose host offers one queue pair (its own
// finding says the fix is on the host) and a VF that is single-queue by
// design. For both the queue count is not a setting of this host, and the
// finding's fix would be one the reader cannot apply.
func (h *Host) queueCountFixed(n *NIC) bool {
	if _, ok := h.virtioSingleQueue(n); ok {
		return true
	}
	return vfSingleByDesign(n)
}
