package snapshot

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// CaptureOption configures Capture.
type CaptureOption func(*captureOptions)

type captureOptions struct {
	source  string
	ethtool nicinfo.EthtoolSource
	etSet   bool
	now     func() time.Time
	limits  Limits
}

// FromRoot captures from dir (an unpacked snapshot) instead of the live
// host; the ethtool answers then come from dir's ethtool/ files.
func FromRoot(dir string) CaptureOption {
	return func(o *captureOptions) { o.source = dir }
}

// WithEthtool sets where the ethtool answers written to ethtool/IFACE.json
// come from (default: the kernel for the live host, the files of a
// snapshot). nil writes none.
func WithEthtool(src nicinfo.EthtoolSource) CaptureOption {
	return func(o *captureOptions) { o.ethtool, o.etSet = src, true }
}

// CaptureLimits sets the caps on what Capture copies (default
// DefaultLimits; a zero field keeps its default): a file over MaxFileBytes
// is skipped and listed in the manifest; going past MaxEntries or MaxBytes
// stops the capture with ErrLimit. The defaults match what Open accepts.
func CaptureLimits(l Limits) CaptureOption {
	return func(o *captureOptions) { o.limits = l }
}

// Manifest is written to nicdiag-snapshot.json at the snapshot root.
type Manifest struct {
	// Schema is ManifestSchema.
	Schema int `json:"schema"`
	// Created is when the capture ran (UTC).
	Created time.Time `json:"created"`
	// Root is true when it ran as root: full config space was readable.
	Root bool `json:"captured_as_root"`
	// Interfaces are the netdevs captured, in /sys/class/net order.
	Interfaces []string `json:"interfaces"`
	// Skipped names files that could not be read or were refused (a FIFO
	// or device, a file over MaxFileBytes, a symlink leaving the root),
	// with the reason; at most 10,000, then a line counting the rest.
	Skipped []string `json:"skipped,omitempty"`
}

// ManifestSchema is the version of Manifest.
const ManifestSchema = 1

// pciAttrs are the files copied from every PCI function. The set is an
// allow-list: resource*, rom, vpd and the like are never read, since
// reading them touches the device.
var pciAttrs = []string{
	"vendor", "device", "subsystem_vendor", "subsystem_device", "class", "revision",
	"numa_node", "local_cpulist", "local_cpus", "irq", "modalias", "uevent", "enable",
	"current_link_speed", "current_link_width", "max_link_speed", "max_link_width",
	"config", "sriov_totalvfs", "sriov_numvfs", "sriov_offset", "sriov_stride",
	"secondary_bus_number", "subordinate_bus_number", "d3cold_allowed", "power_state",
	"aer_dev_correctable", "aer_dev_fatal", "aer_dev_nonfatal", "ari_enabled", "msi_bus",
	"max_payload_size", "max_read_request_size",
}

// pciLinks are the symlinks copied from every PCI function.
var pciLinks = []string{"driver", "physfn", "subsystem", "iommu_group"}

// devAttrs are copied from the other devices between a netdev and its bus
// (virtioN, USB interfaces and devices).
var devAttrs = []string{
	"vendor", "device", "features", "status", "modalias", "uevent",
	"idVendor", "idProduct", "speed", "version", "busnum", "devnum", "manufacturer", "product",
	"bInterfaceClass", "bInterfaceNumber",
}

// netAttrs are copied from every /sys/class/net/IFACE.
var netAttrs = []string{
	"address", "addr_assign_type", "addr_len", "broadcast", "carrier", "carrier_changes",
	"dev_id", "dev_port", "duplex", "flags", "ifalias", "ifindex", "iflink", "link_mode",
	"mtu", "name_assign_type", "operstate", "phys_port_id", "phys_port_name", "phys_switch_id",
	"speed", "tx_queue_len", "type", "uevent", "master", "carrier_up_count", "carrier_down_count",
}

// brportAttrs are copied from a bridge port's brport/: the link naming its
// bridge, and its STP state.
var brportAttrs = []string{"bridge", "state"}

// bondingAttrs are copied from a bonding master's bonding/.
var bondingAttrs = []string{"mode", "xmit_hash_policy", "slaves", "active_slave", "mii_status", "miimon", "lacp_rate", "ad_select"}

// maxLowerLinks bounds the lower_IFACE links copied from one netdev.
const maxLowerLinks = 256

// procFiles are copied from /proc (and the CPU lists from /sys); the IRQ
// files from /proc/irq.
var procFiles = []string{
	"/proc/interrupts", "/proc/softirqs", "/proc/stat", "/proc/net/softnet_stat", "/proc/cpuinfo",
	"/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible",
	"/sys/hypervisor/type", // with /sys/class/dmi/id's strings: nicinfo.ReadPlatform
	nicinfo.IPv4ForwardFile, nicinfo.IPv6ForwardFile,
}

var irqFiles = []string{"smp_affinity", "smp_affinity_list", "effective_affinity", "effective_affinity_list", "node", "affinity_hint"}

// Capture copies what nicdiag reads from the host into dir (which must be
// empty or absent): the netdevs and every PCI function with their
// attributes and symlinks (as relative links, laid out as the kernel has
// them; a netdev's master link, lower_IFACE links, bridge-port brport/ and a
// bond's bonding/ too), /proc's
// interrupt and CPU files, each online CPU's SMT siblings and cpufreq
// attributes, the IP forwarding sysctls, and ethtool/IFACE.json for each
// interface. Files that cannot be read are listed in the manifest, not
// fatal; config space holds 64 bytes when not run as root.
//
// From a snapshot directory (FromRoot, which may be hostile) every read is
// confined to it: symlinks leaving it are not followed, FIFOs and devices
// are refused without blocking (both listed in the manifest), and what is
// copied is bounded by CaptureLimits.
func Capture(ctx context.Context, dir string, opts ...CaptureOption) (*Manifest, error) {
	o := captureOptions{source: "/", now: time.Now}
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	live := filepath.Clean(o.source) == "/"
	if !o.etSet {
		if live {
			o.ethtool = nicinfo.LiveEthtool(nicinfo.KeepStats(keptStat))
		} else {
			o.ethtool = nicinfo.EthtoolFiles(o.source)
		}
	}
	if c, ok := o.ethtool.(interface{ Close() error }); ok && !o.etSet {
		defer c.Close()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	c := &copier{ctx: ctx, src: o.source, dst: dir, root: fsroot.New(o.source), lim: o.limits.orDefault(), done: map[string]bool{}, dirs: newPathSet()}
	m := &Manifest{Schema: ManifestSchema, Created: o.now().UTC(), Root: os.Geteuid() == 0}

	ifaces, err := c.copyInterfaces(ctx, o.ethtool)
	if err != nil {
		return nil, err
	}
	m.Interfaces = ifaces
	c.copyNetlink(ctx, ifaces)
	c.copyPCI()
	c.copyThunderbolt()
	c.copyProc()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sort.Strings(c.skipped)
	if c.unlisted > 0 {
		c.skipped = append(c.skipped, fmt.Sprintf("(%d more files not read, not listed)", c.unlisted))
	}
	m.Skipped = c.skipped
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "nicdiag-snapshot.json"), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if c.fatal != nil {
		return nil, fmt.Errorf("snapshot: %w", c.fatal)
	}
	return m, nil
}
