package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
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

// copier copies kernel paths from src to dst, recreating every symlink it
// meets as the same relative link. It reads src through root: confined, and
// never blocking on a FIFO.
type copier struct {
	ctx      context.Context // cancelling it stops the copy at the next file
	src, dst string
	root     fsroot.Root
	lim      Limits
	done     map[string]bool
	skipped  []string
	unlisted int   // skips past maxSkipped
	fatal    error // a write error in dst, or a cap of lim reached
	entries  int   // files, symlinks and directories written
	bytes    int64 // file bytes written
	dirs     *pathSet
	listed   int // directory names listed
}

// maxSkipped bounds the manifest's Skipped list.
const maxSkipped = 10000

// listPerEntry bounds the directory names a capture lists, per entry of
// MaxEntries, so that a source of empty directories without end stops too.
// Capturing a live host or a bundled snapshot lists 0.7 to 1 name per entry
// it writes.
const listPerEntry = 4

func (c *copier) out(p string) string { return filepath.Join(c.dst, filepath.FromSlash(p)) }

func (c *copier) skip(p string, err error) {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if len(c.skipped) >= maxSkipped {
		c.unlisted++
		return
	}
	c.skipped = append(c.skipped, p+": "+err.Error())
}

func (c *copier) limit(name string, max int64, what, p string) error {
	return &LimitError{Limit: name, Max: max, Name: p, Entries: c.entries, Bytes: c.bytes, what: what}
}

// list returns the names in directory p, sorted; once a cap is reached,
// none.
func (c *copier) list(p string) ([]string, error) {
	if c.fatal == nil {
		c.fatal = c.ctx.Err()
	}
	if c.fatal != nil {
		return nil, c.fatal
	}
	names, err := c.root.ReadDir(p)
	if err != nil {
		return nil, err
	}
	c.listed += len(names)
	if max := int64(c.lim.MaxEntries) * listPerEntry; int64(c.listed) > max {
		c.fatal = c.limit("MaxEntries", int64(c.lim.MaxEntries), fmt.Sprintf("directory names listed (%d per entry)", listPerEntry), p)
		return nil, c.fatal
	}
	return names, nil
}

func (c *copier) isDir(p string) bool {
	m, err := c.root.Mode(p)
	return err == nil && m.IsDir()
}

// resolve returns the kernel path p leads to, copying each symlink on the
// way. Links that link refuses stop it.
func (c *copier) resolve(p string) (string, error) {
	return c.root.Resolve(p, c.link)
}

// count counts the entry at kernel path p and the directories it adds to
// dst, setting c.fatal past MaxEntries.
func (c *copier) count(p string) bool {
	add := func(string) error {
		if c.entries >= c.lim.MaxEntries {
			c.fatal = c.limit("MaxEntries", int64(c.lim.MaxEntries), "files, directories and symlinks", p)
			return c.fatal
		}
		c.entries++
		return nil
	}
	rel := strings.TrimPrefix(p, "/")
	return add(rel) == nil && c.dirs.newParents(rel, add) == nil
}

// link recreates the symlink p -> t in dst. A link Open would refuse
// (absolute, leaving the root, or too long) is not made: the error says
// why.
func (c *copier) link(p, t string) error {
	if c.done[p] {
		return nil
	}
	if c.fatal != nil {
		return c.fatal
	}
	rel := strings.TrimPrefix(p, "/")
	if err := checkPathSize("a path", rel); err != nil {
		return err
	}
	if err := checkLink(rel, t); err != nil {
		return err
	}
	c.done[p] = true
	if !c.count(p) {
		return c.fatal
	}
	dst := c.out(p)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		c.fatal = err
		return err
	}
	if err := os.Symlink(t, dst); err != nil && !errors.Is(err, fs.ErrExist) {
		c.fatal = err
		return err
	}
	return nil
}

// write writes b to kernel path p in dst, within the caps.
func (c *copier) write(p string, b []byte) {
	if c.fatal != nil {
		return
	}
	if err := checkPathSize("a path", strings.TrimPrefix(p, "/")); err != nil {
		c.skip(p, err)
		return
	}
	if int64(len(b)) > c.lim.MaxBytes-c.bytes {
		c.fatal = c.limit("MaxBytes", c.lim.MaxBytes, "the files' bytes", p)
		return
	}
	if !c.count(p) {
		return
	}
	dst := c.out(p)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		c.fatal = err
		return
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		c.fatal = err
		return
	}
	c.bytes += int64(len(b))
}

// copyFile copies one regular file at kernel path p (already resolved).
func (c *copier) copyFile(p string) {
	if c.fatal == nil {
		c.fatal = c.ctx.Err()
	}
	if c.done[p] || c.fatal != nil {
		return
	}
	c.done[p] = true
	b, err := c.read(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		c.skip(p, err)
	default:
		c.write(p, b)
	}
}

// read reads the file at kernel path p, confined and never blocking
// (fsroot's Open), refusing one over MaxFileBytes: at once when its size
// says so, else once that much is read (procfs files report size 0).
func (c *copier) read(p string) ([]byte, error) {
	f, err := c.root.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	max := c.lim.MaxFileBytes
	tooLarge := fmt.Errorf("larger than MaxFileBytes (%d bytes)", max)
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, tooLarge
	}
	return b, nil
}

// special are the file types a capture never opens.
const special = fs.ModeNamedPipe | fs.ModeSocket | fs.ModeDevice | fs.ModeCharDevice | fs.ModeIrregular

// copyNames copies the named entries of directory dir: files, and
// symlinks as links.
func (c *copier) copyNames(dir string, names []string) {
	real, err := c.resolve(dir)
	if err != nil {
		return
	}
	for _, n := range names {
		if c.fatal != nil {
			return
		}
		p := path.Join(real, n)
		m, err := c.root.Mode(p) // lstat beneath the root
		if err != nil {
			continue
		}
		switch {
		case m&fs.ModeSymlink != 0:
			if t, err := c.root.Readlink(p); err == nil {
				if err := c.link(p, t); err != nil && err != c.fatal {
					c.skip(p, err)
				}
			}
		case m.IsRegular() && m.Perm()&0o444 != 0:
			c.copyFile(p)
		case m&special != 0:
			c.skip(p, fsroot.ErrNotRegular) // never opened: a FIFO would block
		}
	}
}

// copyTree copies the regular files under dir, depth levels deep.
func (c *copier) copyTree(dir string, depth int) {
	real, err := c.resolve(dir)
	if err != nil {
		return
	}
	names, err := c.list(real)
	if err != nil {
		return
	}
	for _, n := range names {
		if c.fatal != nil {
			return
		}
		p := path.Join(real, n)
		m, err := c.root.Mode(p)
		if err != nil {
			continue
		}
		switch {
		case m.IsDir() && depth > 1:
			c.copyTree(p, depth-1)
		case m.IsRegular() && m.Perm()&0o444 != 0:
			c.copyFile(p)
		case m&special != 0:
			c.skip(p, fsroot.ErrNotRegular) // never opened: a FIFO would block
		}
	}
}

// copyDeviceChain copies a device and every device above it up to
// /sys/devices: PCI functions with pciAttrs, msi_irqs/ and their SR-IOV
// links; other devices with devAttrs.
func (c *copier) copyDeviceChain(dev string) {
	for p := dev; strings.HasPrefix(p, "/sys/devices/") && p != "/sys/devices"; p = path.Dir(p) {
		if c.done["dev:"+p] || c.fatal != nil {
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
	c.write("/ethtool/"+name+".json", append(b, '\n'))
}
