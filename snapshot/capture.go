package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// CaptureOption configures Capture.
type CaptureOption func(*captureOptions)

type captureOptions struct {
	source  string
	ethtool nicinfo.EthtoolSource
	etSet   bool
	now     func() time.Time
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
	// Skipped names files that could not be read, with the reason.
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
			o.ethtool = nicinfo.LiveEthtool(nicinfo.KeepStats(irq.IsLossStat))
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
	c := &copier{src: o.source, dst: dir, done: map[string]bool{}}
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

// copier copies kernel paths from src to dst, recreating every symlink it
// meets as the same relative link.
type copier struct {
	src, dst string
	done     map[string]bool
	skipped  []string
	fatal    error // a write error in dst
}

func (c *copier) host(p string) string { return filepath.Join(c.src, filepath.FromSlash(p)) }
func (c *copier) out(p string) string  { return filepath.Join(c.dst, filepath.FromSlash(p)) }

func (c *copier) skip(p string, err error) {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	c.skipped = append(c.skipped, p+": "+err.Error())
}

func (c *copier) list(p string) ([]string, error) {
	ents, err := os.ReadDir(c.host(p))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names, nil
}

func (c *copier) isDir(p string) bool {
	fi, err := os.Lstat(c.host(p))
	return err == nil && fi.IsDir()
}

// resolve returns the kernel path p leads to, copying each symlink on the
// way. Absolute links and links above the source root are refused.
func (c *copier) resolve(p string) (string, error) {
	return fsroot.New(c.src).Resolve(p, func(link, t string) error {
		if path.IsAbs(t) {
			return fmt.Errorf("%s: absolute symlink to %q not kept", link, t)
		}
		c.link(link, t)
		return nil
	})
}

// link recreates the symlink p -> t in dst.
func (c *copier) link(p, t string) {
	if c.done[p] {
		return
	}
	c.done[p] = true
	dst := c.out(p)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		c.fatal = err
		return
	}
	if err := os.Symlink(t, dst); err != nil && !errors.Is(err, fs.ErrExist) {
		c.fatal = err
	}
}

// copyFile copies one regular file at kernel path p (already resolved).
func (c *copier) copyFile(p string) {
	if c.done[p] {
		return
	}
	c.done[p] = true
	b, err := os.ReadFile(c.host(p))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.skip(p, err)
		}
		return
	}
	dst := c.out(p)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		c.fatal = err
		return
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		c.fatal = err
	}
}

// copyNames copies the named entries of directory dir: files, and
// symlinks as links.
func (c *copier) copyNames(dir string, names []string) {
	for _, n := range names {
		p := dir + "/" + n
		fi, err := os.Lstat(c.host(p))
		if err != nil {
			continue
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if t, err := os.Readlink(c.host(p)); err == nil && !path.IsAbs(t) {
				c.link(p, t)
			}
		case fi.Mode().IsRegular() && fi.Mode().Perm()&0o444 != 0:
			c.copyFile(p)
		}
	}
}

// copyTree copies the regular files under dir, depth levels deep.
func (c *copier) copyTree(dir string, depth int) {
	names, err := c.list(dir)
	if err != nil {
		return
	}
	for _, n := range names {
		p := dir + "/" + n
		fi, err := os.Lstat(c.host(p))
		if err != nil {
			continue
		}
		switch {
		case fi.IsDir() && depth > 1:
			c.copyTree(p, depth-1)
		case fi.Mode().IsRegular() && fi.Mode().Perm()&0o444 != 0:
			c.copyFile(p)
		}
	}
}

// copyDeviceChain copies a device and every device above it up to
// /sys/devices: PCI functions with pciAttrs, msi_irqs/ and their SR-IOV
// links; other devices with devAttrs.
func (c *copier) copyDeviceChain(dev string) {
	for p := dev; strings.HasPrefix(p, "/sys/devices/") && p != "/sys/devices"; p = path.Dir(p) {
		if c.done["dev:"+p] {
			return
		}
		c.done["dev:"+p] = true
		if isBDF(path.Base(p)) {
			c.copyNames(p, pciAttrs)
			c.copyNames(p, pciLinks)
			c.copyIOMMUType(p)
			c.copyTree(p+"/msi_irqs", 1)
			names, _ := c.list(p)
			for _, n := range names {
				if strings.HasPrefix(n, "virtfn") {
					c.copyNames(p, []string{n})
				}
			}
			continue
		}
		c.copyNames(p, devAttrs)
		c.copyNames(p, []string{"driver", "subsystem"})
	}
}

// copyIOMMUType copies the type of the IOMMU group the PCI function at dev
// belongs to (/sys/kernel/iommu_groups/N/type, through the iommu_group
// link): its default DMA domain.
func (c *copier) copyIOMMUType(dev string) {
	if real, err := c.resolve(dev + "/iommu_group/type"); err == nil {
		c.copyFile(real)
	}
}

func isBDF(s string) bool { return pcie.Address(s).Valid() }

func (c *copier) writeEthtool(ctx context.Context, src nicinfo.EthtoolSource, name string) {
	a, err := src.Answers(ctx, name)
	if err != nil {
		c.skip("ethtool/"+name+".json", err)
		return
	}
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		c.skip("ethtool/"+name+".json", err)
		return
	}
	dst := c.out("/ethtool/" + name + ".json")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		c.fatal = err
		return
	}
	if err := os.WriteFile(dst, append(b, '\n'), 0o644); err != nil {
		c.fatal = err
	}
}
