package nicinfo

import (
	"context"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
)

// Platform is what the kernel says about the machine itself: whether it is
// a virtual machine and, when the firmware names it, whose. It rests on
// /sys/hypervisor/type (Xen), /sys/class/dmi/id/sys_vendor and
// product_name (the SMBIOS strings the hypervisor's firmware writes) and the
// "hypervisor" flag in /proc/cpuinfo (CPUID leaf 1, ECX bit 31, which every
// x86 hypervisor sets). Fields that could not be read are empty; a snapshot
// without these files reads as no VM.
type Platform struct {
	// VM is true when any of the signals says the kernel runs under a
	// hypervisor.
	VM bool `json:"vm"`
	// Hypervisor names it where the signals do: HypervisorQEMU,
	// HypervisorVMware, ...; "" when none is named (a VM known only by its
	// CPU flag, such as a Firecracker guest, or no VM).
	Hypervisor string `json:"hypervisor,omitempty"`
	// SysVendor and ProductName are /sys/class/dmi/id's sys_vendor and
	// product_name ("QEMU", "Standard PC (Q35 + ICH9, 2009)").
	SysVendor   string `json:"sys_vendor,omitempty"`
	ProductName string `json:"product_name,omitempty"`
	// HypervisorType is /sys/hypervisor/type ("xen").
	HypervisorType string `json:"hypervisor_type,omitempty"`
	// CPUFlag is true when /proc/cpuinfo's flags include "hypervisor".
	CPUFlag bool `json:"cpu_hypervisor_flag,omitempty"`
	// CPUs counts the "processor" entries of /proc/cpuinfo (online CPUs);
	// 0 when it could not be read.
	CPUs int `json:"cpus,omitempty"`
}

// Hypervisors Platform.Hypervisor names.
const (
	HypervisorQEMU       = "QEMU"   // QEMU, with KVM or without (sys_vendor "QEMU")
	HypervisorVMware     = "VMware" // sys_vendor "VMware, Inc."
	HypervisorHyperV     = "Hyper-V"
	HypervisorXen        = "Xen"
	HypervisorEC2        = "Amazon EC2"
	HypervisorGCE        = "Google Compute Engine"
	HypervisorVirtualBox = "VirtualBox"
	HypervisorParallels  = "Parallels"
	HypervisorOpenStack  = "OpenStack" // Nova's KVM guests
)

// maxCPUInfo bounds /proc/cpuinfo (some 2 KiB per CPU).
const maxCPUInfo = 16 << 20

// ReadPlatform reads the platform signals under the root (option.Root; the
// other options are ignored). Files that are absent or unreadable leave
// their fields empty: without root every one of them is still readable, and
// a snapshot that lacks them is simply a host that names no hypervisor.
func ReadPlatform(ctx context.Context, opts ...Option) Platform {
	o := applyOptions(opts) // no ethtool source is needed
	if ctx.Err() != nil {
		return Platform{}
	}
	p := readDMI(o)
	if b, err := o.root.ReadFileMax("/proc/cpuinfo", maxCPUInfo); err == nil {
		p.CPUFlag, p.CPUs = parseCPUInfo(string(b))
	}
	p.Hypervisor, p.VM = classifyPlatform(p)
	return p
}

// parseCPUInfo finds the "hypervisor" flag on any "flags" line and counts
// the "processor" entries. Lines it does not know are skipped.
func parseCPUInfo(s string) (flag bool, cpus int) {
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "processor":
			cpus++
		case "flags":
			if !flag {
				for _, f := range strings.Fields(val) {
					if f == "hypervisor" {
						flag = true
						break
					}
				}
			}
		}
	}
	return flag, cpus
}

// classifyPlatform names the hypervisor from the DMI strings and
// /sys/hypervisor/type, and says whether the machine is a VM. An EC2 bare
// metal instance ("m5.metal") carries sys_vendor "Amazon EC2" without being
// a VM: only the CPU flag decides there. A "Microsoft Corporation" machine
// is Hyper-V only when its product is "Virtual Machine" (a Surface laptop
// is not).
func classifyPlatform(p Platform) (name string, vm bool) {
	vendor, product := p.SysVendor, p.ProductName
	switch {
	case vendor == "QEMU" || strings.HasPrefix(product, "KVM") || vendor == "Bochs":
		name = HypervisorQEMU
	case strings.HasPrefix(vendor, "VMware"):
		name = HypervisorVMware
	case vendor == "Microsoft Corporation" && product == "Virtual Machine":
		name = HypervisorHyperV
	case vendor == "Xen" || strings.EqualFold(p.HypervisorType, "xen"):
		name = HypervisorXen
	case vendor == "Amazon EC2" && !strings.HasSuffix(product, ".metal"):
		name = HypervisorEC2
	case vendor == "Google" && strings.Contains(product, "Compute Engine"):
		name = HypervisorGCE
	case vendor == "innotek GmbH" || product == "VirtualBox":
		name = HypervisorVirtualBox
	case strings.HasPrefix(vendor, "Parallels"):
		name = HypervisorParallels
	case strings.HasPrefix(vendor, "OpenStack") || strings.HasPrefix(product, "OpenStack"):
		name = HypervisorOpenStack
	}
	return name, name != "" || p.CPUFlag || p.HypervisorType != ""
}

// readDMI reads the platform's names: /sys/hypervisor/type and the DMI
// sys_vendor and product_name; absent files leave their fields empty.
func readDMI(o options) Platform {
	read := func(path string) string {
		s, err := o.root.ReadString(path)
		if err != nil {
			return ""
		}
		return text.Clip(text.Clean(strings.TrimSpace(s)))
	}
	return Platform{HypervisorType: read("/sys/hypervisor/type"),
		SysVendor: read("/sys/class/dmi/id/sys_vendor"), ProductName: read("/sys/class/dmi/id/product_name")}
}
