package nicdiag

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// ErrNotRoot is returned by Inspect, Check and Explain for a root directory
// that holds neither sys/ nor proc/: an empty or unrelated directory would
// otherwise read as a host without NICs.
var ErrNotRoot = fsroot.ErrNotRoot

// Host is what Inspect gathered about one host (or snapshot), once: every
// network function with its PCIe path, default-workload budget and queue
// map, the identity verdicts, and what could not be read. Checks, commands
// and the exporter read a Host; none of them reads the host again.
type Host struct {
	// Root is the directory read: "/" for the live host.
	Root string `json:"root"`
	// NICs are every network interface (virtual ones too), sorted by
	// name, then the PCI network functions without a netdev, by address.
	NICs []*NIC `json:"nics"`
	// Selected are the NICs asked for (WithInterfaces), in that order, or
	// every physical one; checks judge these.
	Selected []*NIC `json:"-"`
	// Interrupts is /proc/interrupts; nil when it could not be read.
	Interrupts *irq.Interrupts `json:"-"`
	// Identity holds the identity verdicts over every NIC.
	Identity []nicinfo.Identity `json:"-"`
	// Unread lists what could not be read, and so not judged.
	Unread []Unread `json:"unread,omitempty"`
	// Platform says whether the host is a virtual machine, and whose
	// (nicinfo.ReadPlatform).
	Platform nicinfo.Platform `json:"platform"`
	// Forwarding is whether the host routes between its interfaces
	// (net.ipv4.ip_forward, net.ipv6.conf.all.forwarding); nil when
	// neither sysctl could be read (a snapshot without them).
	Forwarding *nicinfo.Forwarding `json:"forwarding,omitempty"`
	// CPUs are the online CPUs' SMT siblings and frequency scaling
	// (irq.ReadCPUs); nil when the online list could not be read.
	CPUs *irq.CPUs `json:"-"`
	// Facts are the host audit's host-wide facts (idle states, connection
	// tracking, bridge netfilter).
	Facts HostFacts `json:"facts"`

	vfs   map[pcie.Address]bool
	ident map[string]*nicinfo.Identity // misidentification by interface
	every bool                         // no interfaces named: every physical NIC selected
}

// NIC is one network function of the host: a network interface, or a PCI
// network function without one (bound to vfio-pci or another DPDK driver,
// or to no driver), with the facts the checks join.
type NIC struct {
	// NIC is the inventory record. For a function without a netdev, Name is
	// "" and the record holds its PCI facts.
	nicinfo.NIC
	// NoNetdev is set for a function without a netdev.
	NoNetdev *nicinfo.NoNetdevFunction `json:"no_netdev,omitempty"`
	// Virtual is true for a paravirtual or software NIC (nicinfo.IsVirtual).
	Virtual bool `json:"virtual,omitempty"`
	// Path is the PCIe path to the root port; nil when not on PCI or not
	// walked (see Host.Unread).
	Path *pcie.Path `json:"pcie_path,omitempty"`
	// Budget is the default workload's budget; nil when nothing can be
	// modelled.
	Budget *budget.Budget `json:"budget,omitempty"`
	// Queues maps the NIC's queues to IRQs and CPUs; nil without
	// /proc/interrupts or for a function without a netdev.
	Queues *irq.NICQueues `json:"queues,omitempty"`
	// Steering is its RPS/XPS configuration.
	Steering irq.Steering `json:"-"`
	// Selected is true when the NIC is among Host.Selected.
	Selected bool `json:"-"`
	// LossTotals are its receive and loss counters since the driver
	// started counting (sysfs statistics and the driver's loss counters);
	// nil for a function without a netdev, an unselected NIC, or
	// statistics that could not be read (see Host.Unread).
	LossTotals *irq.LossTotals `json:"loss_totals,omitempty"`
	// LinkErrors are its damaged-frame counters since the driver started
	// counting (interface statistics and the driver's CRC, symbol,
	// alignment and length counters); nil where not read.
	LinkErrors *nicinfo.LinkErrors `json:"link_errors,omitempty"`
	// IOMMUDomain is the type of the default DMA domain of its IOMMU group
	// (/sys/bus/pci/devices/ADDR/iommu_group/type: "DMA", "DMA-FQ",
	// "identity", "blocked", "unmanaged"); "" without an IOMMU group or
	// for an unselected NIC.
	IOMMUDomain string `json:"iommu_domain,omitempty"`
	// IOMMUGroup is the number of its IOMMU group; "" without one.
	IOMMUGroup string `json:"iommu_group,omitempty"`
}

// Judged reports whether the NIC's PCIe path is judged: a PCI function of a
// real device (not virtual, not a software interface).
func (n *NIC) Judged() bool { return n.PCI != nil && n.Physical() && !n.Virtual }

// Part names what could not be read.
type Part string

// Parts of a host that Inspect reads.
const (
	PartNoNetdev   Part = "PCI functions without a netdev"
	PartPath       Part = "PCIe path"
	PartBudget     Part = "budget"
	PartInterrupts Part = "irq checks"
	PartNetdev     Part = "network interface"
)

// Unread is one thing Inspect could not read: which part, about which
// subject ("" for the whole host), and the error.
type Unread struct {
	Part    Part   `json:"part"`
	Subject string `json:"subject,omitempty"`
	Err     error  `json:"-"`
	// Error is Err's text, for JSON.
	Error string `json:"error"`
}

// String renders "enp1s0f0: PCIe path: ...".
func (u Unread) String() string {
	if u.Subject == "" {
		return fmt.Sprintf("%s: %v", u.Part, u.Err)
	}
	return fmt.Sprintf("%s: %s: %v", u.Subject, u.Part, u.Err)
}

func (h *Host) unread(p Part, subject string, err error) {
	h.Unread = append(h.Unread, Unread{Part: p, Subject: subject, Err: err, Error: err.Error()})
}

// Inspect reads the host (or the snapshot given by option.Root) once: the
// inventory, the PCI network functions without a netdev, the PCIe path and
// default-workload budget of every selected PCI NIC, /proc/interrupts and
// each selected NIC's queue map, steering and receive and drop counters
// since boot (LossTotals), its IOMMU group's domain type, the online CPUs'
// SMT siblings and frequency scaling (CPUs), and the identity verdicts.
// It fails when the root is not a host root (ErrNotRoot, or an error
// matching os.ErrNotExist when it does not exist), when the interfaces
// cannot be listed, or when a name given to WithInterfaces is unknown
// (nicinfo.ErrNoInterface); whatever else cannot be read is in Unread.
func Inspect(ctx context.Context, opts ...Option) (*Host, error) {
	o := buildOptions(opts)
	o.bound(ctx)
	if err := fsroot.Check(o.root); err != nil {
		return nil, fmt.Errorf("nicdiag: root %w", err)
	}
	if !o.inventoryOnly {
		defer o.keepLossStats()() // the driver's statistics: read for the checks, not for a list
	}
	all, err := nicinfo.List(ctx, o.nicinfo()...)
	if err != nil {
		return nil, err
	}
	h := &Host{Root: o.rootDir(), vfs: map[pcie.Address]bool{}, ident: map[string]*nicinfo.Identity{}}
	h.Platform = nicinfo.ReadPlatform(ctx, o.nicinfo()...)
	bare, err := nicinfo.NoNetdev(ctx, o.nicinfo()...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		h.unread(PartNoNetdev, "", err)
	}
	for i := range all {
		h.NICs = append(h.NICs, &NIC{NIC: all[i], Virtual: nicinfo.IsVirtual(&all[i])})
	}
	for i := range bare {
		b := &bare[i]
		n := nicinfo.NIC{Bus: nicinfo.BusPCI, PCI: &b.PCIFunction, Link: nicinfo.Link{SpeedMbps: nicinfo.SpeedUnknown},
			NUMANode: b.NUMANode, LocalCPUs: b.LocalCPUs, Missing: b.Missing}
		h.NICs = append(h.NICs, &NIC{NIC: n, NoNetdev: b})
	}
	for _, n := range h.NICs {
		if n.PCI != nil && n.PCI.PhysFn != "" {
			h.vfs[n.PCI.Address] = true
		}
	}
	if err := h.selectNICs(o.ifaces); err != nil {
		return nil, err
	}
	h.Identity = nicinfo.Identify(all)
	for i := range h.Identity {
		// Only a contradiction that makes the speed nominal counts: a
		// driver the table does not list (info) leaves the speed real.
		if id := &h.Identity[i]; id.Misidentified && id.Finding.Severity >= finding.Warn {
			for _, name := range id.Interfaces {
				h.ident[name] = id
			}
		}
	}
	if o.inventoryOnly {
		return h, nil
	}
	if fw, _ := nicinfo.ReadForwarding(o.nicinfo()...); fw.Known() {
		h.Forwarding = &fw // a malformed sysctl is unknown: no verdict rests on it
	}
	if err := h.readPaths(ctx, o); err != nil {
		return nil, err
	}
	if err := h.readQueues(ctx, o); err != nil {
		return nil, err
	}
	h.readLossTotals(o)
	h.readModuleErrs()
	h.CPUs, _ = irq.ReadCPUs(o.irq()...) // nil: the cpu checks have no answer
	h.readIOMMU(o)
	h.readHostFacts(o)
	h.noteUnjoined(o)
	return h, nil
}

// readPaths walks the PCIe path of every selected PCI NIC and solves the
// default workload on it.
func (h *Host) readPaths(ctx context.Context, o options) error {
	walker := pcie.NewWalker(o.pcie()...)
	for _, n := range h.Selected {
		if n.PCI == nil || !n.Physical() {
			continue
		}
		path, err := walker.PathTo(ctx, n.PCI.Address)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if n.Judged() {
				h.unread(PartPath, n.ID(), err)
			}
			continue
		}
		n.Path = path
		if !n.Judged() {
			continue // shown, not modelled
		}
		b, err := h.budgetFor(n, path, budget.Workload{})
		switch {
		case err != nil && n.Link.SpeedMbps <= 0 && errors.Is(err, budget.ErrInvalidWorkload):
			continue // a link that is down, on an unknown chip: nothing to budget
		case err != nil:
			h.unread(PartBudget, n.ID(), err)
			continue
		}
		n.Budget = b
	}
	return nil
}

// readQueues reads /proc/interrupts once and maps the queues of every
// selected netdev onto it. Without it, the IRQ checks do not run: that is
// in Unread whenever a netdev is selected, a file missing included.
func (h *Host) readQueues(ctx context.Context, o options) error {
	x, err := irq.ReadInterrupts(ctx, o.irq()...)
	switch {
	case err == nil:
		h.Interrupts = x
	case ctx.Err() != nil:
		return ctx.Err()
	case !slices.ContainsFunc(h.Selected, (*NIC).Netdev):
	case errors.Is(err, fs.ErrNotExist) && !fsroot.New(o.root).Exists("/proc"):
		h.unread(PartInterrupts, "", errNoProc)
	default:
		h.unread(PartInterrupts, "", err)
	}
	for _, n := range h.Selected {
		if !n.Netdev() {
			continue
		}
		if x != nil {
			q := irq.MapQueues(n.NIC, x, o.irq()...)
			n.Queues = &q
		}
		n.Steering, _ = irq.ReadSteering(n.Name, o.irq()...)
	}
	return nil
}

// Lookup returns the NIC called name: an interface name, the PCI address
// of an interface's function, or the PCI address of a function without a
// netdev (the domain may be left out). An unknown name wraps
// nicinfo.ErrNoInterface (and so os.ErrNotExist).
func (h *Host) Lookup(name string) (*NIC, error) {
	ns := h.match(name)
	if len(ns) == 0 {
		return nil, fmt.Errorf("nicdiag: %q: %w", name, nicinfo.ErrNoInterface)
	}
	return ns[0], nil
}

// named returns the interface called name, or nil.
func (h *Host) named(name string) *NIC {
	for _, n := range h.NICs {
		if n.Name == name && name != "" {
			return n
		}
	}
	return nil
}

// match returns the NICs name stands for: the interface of that name, else
// every NIC on the PCI function with that address.
func (h *Host) match(name string) []*NIC {
	if n := h.named(name); n != nil {
		return []*NIC{n}
	}
	addr, err := pcie.ParseAddress(name)
	if err != nil {
		return nil
	}
	var out []*NIC
	for _, n := range h.NICs {
		if n.PCI != nil && n.PCI.Address == addr {
			out = append(out, n)
		}
	}
	return out
}

// selectNICs sets Selected: the NICs names stand for, in order, or every
// physical NIC (with or without a netdev) when names is empty. A named
// interface that sits on others (a bond, VLAN or bridge: NIC.Lower) brings
// the interfaces under it too, walked down to the physical NICs.
func (h *Host) selectNICs(names []string) error {
	if len(names) == 0 {
		h.every = true
		for _, n := range h.NICs {
			if n.Physical() {
				h.pick(n)
			}
		}
		return nil
	}
	for _, name := range names {
		ns := h.match(name)
		if len(ns) == 0 {
			return fmt.Errorf("nicdiag: %q: %w", name, nicinfo.ErrNoInterface)
		}
		for _, n := range ns {
			h.pick(n)
			h.pickLower(n, 0)
		}
	}
	return nil
}

// pickLower selects the interfaces n sits on, and theirs, down to the
// physical NICs; depth bounds a loop in a hand-made snapshot.
func (h *Host) pickLower(n *NIC, depth int) {
	if depth > 8 {
		return
	}
	for _, name := range n.Lower {
		if l := h.named(name); l != nil && l != n {
			h.pick(l)
			h.pickLower(l, depth+1)
		}
	}
}

func (h *Host) pick(n *NIC) {
	if !n.Selected {
		n.Selected = true
		h.Selected = append(h.Selected, n)
	}
}

// budgetFor is the NIC's budget for w. A misidentified device whose real
// throughput is known (a masquerade) is budgeted, unless w gives a port
// speed, with what it really moves spread over its functions, not with the
// driver's nominal speed.
func (h *Host) budgetFor(n *NIC, path *pcie.Path, w budget.Workload) (*budget.Budget, error) {
	id := h.ident[n.Name]
	ports := h.ports(n)
	if id == nil || id.MovesMbps <= 0 || len(id.Functions) == 0 || w.PortMbps > 0 {
		return budget.ForPorts(&n.NIC, ports, path, w)
	}
	fns := len(id.Functions)
	if w.Ports == 0 {
		w.Ports = fns
	}
	w.PortMbps = float64(id.MovesMbps) / float64(fns)
	b, err := budget.ForPorts(&n.NIC, ports, path, w)
	if err == nil {
		b.PortSpeedSource = budget.FromRealDevice
	}
	return b, err
}

// nominalSpeed reports whether the budget's port speed is a misidentified
// device's nominal figure, reported by its driver.
func (h *Host) nominalSpeed(n *NIC) bool {
	return h.ident[n.Name] != nil && n.Budget != nil && n.Budget.PortSpeedSource == budget.FromDriver
}
