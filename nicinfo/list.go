package nicinfo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/pcie"
)

// List returns every network interface under the root, virtual ones
// included, sorted by name. It fails only when the interfaces cannot be
// listed at all; whatever cannot be read about one interface is named in its
// Missing. A root without /sys/class/net has no interfaces.
func List(ctx context.Context, opts ...Option) ([]NIC, error) {
	o := buildOptions(opts)
	names, err := o.root.ReadDir("/sys/class/net")
	if errors.Is(err, fs.ErrNotExist) {
		return []NIC{}, nil
	}
	if err != nil {
		return nil, wrapErr(fmt.Errorf("listing interfaces: %w", err))
	}
	var ifaces []string
	for _, name := range names {
		if isNetdev(o, name) {
			ifaces = append(ifaces, name) // skips bonding_masters and other plain files
		}
	}
	nics, err := build(ctx, o, ifaces)
	return nics, wrapErr(err)
}

// Get returns the interface called name. An unknown name gives an error
// wrapping ErrNoInterface (and so os.ErrNotExist).
func Get(ctx context.Context, name string, opts ...Option) (*NIC, error) {
	o := buildOptions(opts)
	if err := o.root.Err(); err != nil {
		return nil, wrapErr(err) // a spent budget, not a missing interface
	}
	if !isNetdev(o, name) {
		return nil, wrapErr(fmt.Errorf("%q: %w", text.Clip(name), ErrNoInterface))
	}
	nics, err := build(ctx, o, []string{name})
	if err != nil {
		return nil, wrapErr(err)
	}
	return &nics[0], nil
}

// isNetdev reports whether /sys/class/net/name is an interface directory,
// resolving the link inside the root: one with any of an interface's
// attribute files (a damaged one without ifindex is still an interface, its
// Missing says what is gone), not a plain file such as bonding_masters. A
// link that leads nowhere (or out of a snapshot) is an interface whose
// directory cannot be read: its Missing says so ("sysfs").
func isNetdev(o options, name string) bool {
	if !validIfaceName(name) {
		return false
	}
	dir, err := o.root.Realpath("/sys/class/net/" + name)
	if err != nil {
		m, merr := o.root.Mode("/sys/class/net/" + name)
		return merr == nil && m&fs.ModeSymlink != 0
	}
	for _, f := range []string{"ifindex", "address", "operstate", "mtu", "type"} {
		if o.root.Exists(dir + "/" + f) {
			return true
		}
	}
	return false
}

func build(ctx context.Context, o options, ifaces []string) ([]NIC, error) {
	if c, ok := o.ethtool.(io.Closer); ok && !o.ethtoolSet {
		defer c.Close()
	}
	var links map[string]linkFacts
	var kindErr error
	if o.root.Live() && o.netlink {
		links, kindErr = linkInfo()
	}
	nics := make([]NIC, len(ifaces))
	var q PCIQuery
	for i, name := range ifaces {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := &nics[i]
		n.Name = name
		n.NUMANode = -1
		r := reader{root: o.root, nic: n}
		dev := r.readNetdev(name)
		var bdf pcie.Address
		pciDir := ""
		if dev != "" {
			bdf, pciDir = r.join(dev)
		}
		vfs := r.netlinkFacts(o, links, kindErr)
		var a *EthtoolAnswers
		if o.brief && n.Bus == BusVirtual && o.ethtool != nil {
			a = r.ethtoolBrief(ctx, o.ethtool)
		} else {
			a = r.ethtool(ctx, o.ethtool)
		}
		if bdf == "" && a != nil && n.Bus != BusUSB {
			// No device link in sysfs, but ethtool names a PCI function.
			if b, ok := a.pciFunction(); ok {
				if d, err := o.root.Realpath("/sys/bus/pci/devices/" + string(b)); err == nil {
					bdf, pciDir = b, d
					n.Bus = BusPCI
					n.Warnings = append(n.Warnings, "sysfs has no device link; PCI function taken from ethtool bus-info "+string(b))
				}
			}
		}
		if bdf != "" {
			r.readPCI(ctx, bdf, pciDir)
			f := n.PCI
			q.Add(f.VendorID, f.DeviceID, f.SubsystemVendor, f.SubsystemDevice, f.Class)
			if a != nil && a.BusInfo != "" && !strings.EqualFold(a.BusInfo, string(bdf)) {
				n.Warnings = append(n.Warnings, fmt.Sprintf("ethtool bus-info %q is not the PCI function sysfs names (%s)", text.Clip(a.BusInfo), bdf))
			}
		}
		r.joinVFs(pciDir, vfs)
	}
	nameNICs(o, nics, &q)
	markEmulated(o, nics)
	for i := range nics {
		sort.Strings(nics[i].Missing)
	}
	sort.Slice(nics, func(i, j int) bool { return nics[i].Name < nics[j].Name })
	return nics, nil
}

// nameNICs fills in the pci.ids names of the NICs' PCI functions, which q
// asks for, or says in their Missing why there are none.
func nameNICs(o options, nics []NIC, q *PCIQuery) {
	if q.vendors == nil {
		return
	}
	names, err := loadPCINames(o.root, o.pciIDs, q)
	for i := range nics {
		f := nics[i].PCI
		if f == nil {
			continue
		}
		if err != nil {
			nics[i].Missing = append(nics[i].Missing, "pci.names: "+namesReason(err))
			continue
		}
		names.fill(f)
	}
}

// netlinkFacts fills the NIC's kind, XDP program and tunnel from the live
// host's link dump (links; kindErr when it failed) or a snapshot's
// netlink/IFACE.json, and returns its VFs' settings.
func (r *reader) netlinkFacts(o options, links map[string]linkFacts, kindErr error) []VFConfig {
	n := r.nic
	var vfs []VFConfig
	if links != nil {
		if l, ok := links[n.Name]; ok {
			n.Kind, vfs, n.XDP, n.Tunnel = l.kind, l.vfs, l.xdp, l.tunnel
		}
	} else if kindErr != nil {
		r.missing("kind", kindErr)
	}
	if !o.root.Live() {
		a, err := readNetlinkFile(o.root, n.Name)
		if err != nil {
			r.missing("netlink.vfs", err)
		} else {
			vfs, n.XDP, n.Tunnel = a.VFs, a.XDP, a.Tunnel
		}
	}
	return vfs
}

func namesReason(err error) string {
	if errors.Is(err, ErrNoPCIIDs) {
		return ErrNoPCIIDs.Error()
	}
	return reason(err)
}

// ethtool merges the source's answers into the NIC.
func (r *reader) ethtool(ctx context.Context, src EthtoolSource) *EthtoolAnswers {
	n := r.nic
	if src == nil {
		n.Missing = append(n.Missing, "ethtool: disabled")
		return nil
	}
	a, err := src.Answers(ctx, n.Name)
	return r.mergeEthtool(a, err)
}

// briefMissing is the Missing line of a software interface read in brief.
const briefMissing = "ethtool: driver info only (software interface)"

// ethtoolBrief merges the driver info alone (see WithSoftwareBrief), or all
// the answers when the driver info names a PCI function.
func (r *reader) ethtoolBrief(ctx context.Context, src EthtoolSource) *EthtoolAnswers {
	var a *EthtoolAnswers
	var err error
	if b, ok := src.(driverInfoSource); ok {
		a, err = b.DriverInfo(ctx, r.nic.Name)
	} else if a, err = src.Answers(ctx, r.nic.Name); err == nil {
		a = a.driverInfo()
	}
	if err == nil {
		if _, ok := a.pciFunction(); ok {
			return r.ethtool(ctx, src) // build takes the function from it
		}
		r.nic.Missing = append(r.nic.Missing, briefMissing)
	}
	return r.mergeEthtool(a, err)
}

// mergeEthtool merges a source's answers, or its error, into the NIC.
func (r *reader) mergeEthtool(a *EthtoolAnswers, err error) *EthtoolAnswers {
	n := r.nic
	if err != nil {
		if errors.Is(err, ErrNoAnswers) {
			n.Missing = append(n.Missing, "ethtool: not recorded")
		} else {
			r.missing("ethtool", err)
		}
		return nil
	}
	keys := make([]string, 0, len(a.Errors))
	for k := range a.Errors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		n.Missing = append(n.Missing, "ethtool."+k+": "+a.Errors[k])
	}
	if a.Driver != "" {
		n.Driver = a.Driver
	}
	n.DriverVersion, n.FirmwareVersion, n.BusInfo = a.Version, a.FirmwareVersion, a.BusInfo
	n.PermMAC = a.PermAddr
	if l := a.Link; l != nil {
		if l.SpeedMbps > 0 {
			n.Link.SpeedMbps = l.SpeedMbps
		}
		if l.Duplex != "" && (l.Duplex != "unknown" || n.Link.Duplex == "") {
			n.Link.Duplex = Duplex(l.Duplex)
		}
		an := l.Autoneg
		n.Link.Autoneg = &an
		n.Link.Port = l.Port
		n.Link.Supported = l.Supported
		n.Link.Advertised = l.Advertised
		n.Link.PartnerAdvertised = l.PartnerAdvertised
		markPlaceholders(n)
	}
	if a.Channels != nil {
		c := *a.Channels
		n.Queues.Channels = &c
	}
	n.Rings, n.LossStats = copyRings(a.Rings), copyStats(a.LossStats)
	n.FEC = a.FEC
	if e, ok := a.Errors["module_eeprom"]; ok {
		n.ModuleErr = answerError(e)
	} else if len(a.Module) > 0 {
		switch d, err := ParseModule(a.Module); {
		case err == nil:
			n.Module = d
		case !errors.Is(err, ErrNoDiagnostics):
			r.missing("module", err)
			n.ModuleErr = err
		}
	}
	n.Features, n.Coalesce = a.Features, a.Coalesce
	n.EEE, n.Pause = copyEEE(a.EEE), copyPause(a.Pause)
	return a
}
