package pcie

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
)

// maxFunctions bounds the functions listed below one port; maxDepth the
// nesting walked. Real hosts stay far below both.
const (
	maxFunctions = 4096
	maxDepth     = 32
)

// walker reads ends once and remembers them.
type walker struct {
	o    options
	ends map[string]*End
	fns  map[string][]Function // by port directory
	tb   *fabric               // /sys/bus/thunderbolt, read on the first tunnel
}

func newWalker(opts []Option) *walker {
	return &walker{o: buildOptions(opts), ends: map[string]*End{}, fns: map[string][]Function{}}
}

// PathTo walks from the PCI function addr up to its root port and returns
// every link on the way with both ends, the functions that share each link,
// and a verdict on each. A function on the root bus has no hops; Path says
// why.
func PathTo(ctx context.Context, addr Address, opts ...Option) (*Path, error) {
	return NewWalker(opts...).PathTo(ctx, addr)
}

// Walker walks the PCIe paths of many functions and reads each port and
// function once, so the paths of every NIC below one switch cost one read
// of the switch. It is not safe for concurrent use.
type Walker struct{ w *walker }

// NewWalker returns a Walker reading under the options' root.
func NewWalker(opts ...Option) *Walker { return &Walker{newWalker(opts)} }

// PathTo is the package's PathTo, with what earlier calls read reused.
func (w *Walker) PathTo(ctx context.Context, addr Address) (*Path, error) {
	bdf := string(addr)
	if !isAddress(bdf) {
		return nil, fmt.Errorf("%w: %q", ErrBadAddress, text.Clip(bdf))
	}
	return w.w.path(ctx, bdf)
}

// Links returns every PCIe link on the host that has a device below it, each
// once (keyed by its upstream port), sorted by that port's address. Empty
// ports are not links and are left out.
func Links(ctx context.Context, opts ...Option) ([]Hop, error) {
	w := newWalker(opts)
	names, err := w.o.root.ReadDir("/sys/bus/pci/devices")
	if err != nil {
		return nil, fmt.Errorf("pcie: listing PCI devices: %w", err)
	}
	seen := map[Address]bool{}
	var hops []Hop
	for _, n := range names {
		if !isAddress(n) {
			continue
		}
		p, err := w.path(ctx, n)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue // one unreadable device must not hide the others
		}
		for _, h := range p.Hops {
			if !seen[h.Upstream.Address] {
				seen[h.Upstream.Address] = true
				hops = append(hops, h)
			}
		}
	}
	sort.Slice(hops, func(i, j int) bool { return hops[i].Upstream.Address < hops[j].Upstream.Address })
	return hops, nil
}

func (w *walker) path(ctx context.Context, bdf string) (*Path, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	link := "/sys/bus/pci/devices/" + bdf
	real, err := w.o.root.Realpath(link)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, bdf)
	}
	if err != nil {
		return nil, fmt.Errorf("pcie: resolving %s: %w", link, err)
	}
	base, chain, err := splitChain(real)
	if err != nil {
		return nil, err
	}
	rootBus := path.Base(base)
	if chain[len(chain)-1] != bdf {
		return nil, fmt.Errorf("pcie: %s resolves to %s, not to that function", link, real)
	}
	ends := make([]*End, len(chain))
	dir := base
	for i, a := range chain {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dir += "/" + a
		ends[i] = w.end(a, dir)
	}
	p := &Path{Device: *ends[len(ends)-1], RootBus: rootBus, Hops: []Hop{}}
	pairs, note := linkPairs(ends)
	if note != "" {
		p.Notes = append(p.Notes, note)
	}
	for i := len(pairs) - 1; i >= 0; i-- {
		up, down := ends[pairs[i]], ends[pairs[i]+1]
		h := Hop{Upstream: *up, Downstream: *down}
		if down.PhysFn != "" {
			// A VF has no link registers of its own; the link is its PF's.
			if pf := w.end(string(down.PhysFn), path.Dir(down.dir)+"/"+string(down.PhysFn)); pf.Address != "" {
				h.Downstream = *pf
				h.Notes = append(h.Notes, fmt.Sprintf("%s is a virtual function; the link is that of its physical function %s", down.Address, down.PhysFn))
			}
		}
		h.Functions = w.functions(up.dir)
		for _, f := range h.Functions {
			if f.ClassUnread != "" {
				how := "not counted as a port"
				if f.Network {
					how = "counted as a network port (it has a netdev, or a sibling with its ID is one)"
				}
				h.Notes = append(h.Notes, fmt.Sprintf("the class of %s could not be read (%s): %s", f.Address, f.ClassUnread, how))
			}
		}
		evaluate(&h)
		p.Hops = append(p.Hops, h)
	}
	if len(p.Hops) == 0 {
		p.Architectural = noLinkReason(ends, rootBus)
	} else if h, ok := w.chipsetHop(p.Hops[len(p.Hops)-1].Upstream, base); ok {
		p.Chipset = &h
	}
	for i := range p.Hops {
		if t := p.Hops[i].Tunnel; t != nil {
			if w.tb == nil {
				gen, desc := w.readFabric()
				w.tb = &fabric{gen, desc}
			}
			refineTunnel(t, w.tb.gen, w.tb.desc)
		}
	}
	return p, nil
}

// splitChain splits "/sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0" into
// the host bridge directory and the functions from the root down. A second
// host bridge inside the path (Intel VMD) starts the chain again below it.
func splitChain(real string) (string, []string, error) {
	rest, ok := strings.CutPrefix(real, "/sys/devices/")
	if !ok {
		return "", nil, fmt.Errorf("pcie: %s is not under /sys/devices", real)
	}
	var rootBus string
	var chain []string
	dir := "/sys/devices"
	for _, e := range strings.Split(rest, "/") {
		dir += "/" + e
		switch {
		case isAddress(e):
			if rootBus == "" {
				return "", nil, fmt.Errorf("pcie: %s has a function outside any host bridge", real)
			}
			chain = append(chain, e)
		case isHostBridge(e):
			rootBus, chain = dir, nil
		case rootBus == "" && e != "":
			// The host bridge's own parents: platform devices on Arm and
			// other device-tree SoCs (platform/axi/1000120000.pcie), ACPI
			// and VMBus nodes on Hyper-V guests.
		default:
			return "", nil, fmt.Errorf("pcie: unexpected element %q in %s", text.Clip(e), real)
		}
	}
	if rootBus == "" || len(chain) == 0 {
		return "", nil, fmt.Errorf("pcie: %s names no PCI function", real)
	}
	if len(chain) > maxDepth {
		return "", nil, fmt.Errorf("pcie: %s nests deeper than %d", real, maxDepth)
	}
	return rootBus, chain, nil
}

// linkPairs returns the indexes i for which ends[i]—ends[i+1] is a link.
// With every port type known it uses them; otherwise it takes the PCIe tree
// shape (root port, then upstream/downstream switch port pairs, then the
// device) and says so.
func linkPairs(ends []*End) ([]int, string) {
	known := true
	for _, e := range ends {
		if e.Config == nil || !e.Config.CapsReadable {
			known = false
		}
	}
	var pairs []int
	if known {
		for i := 0; i+1 < len(ends); i++ {
			x := ends[i].Config.Express
			if x == nil {
				break // conventional PCI: nothing below has a PCIe link
			}
			if x.PortType.downFacing() {
				pairs = append(pairs, i)
			}
		}
		return pairs, ""
	}
	for i := 0; i+1 < len(ends); i += 2 {
		pairs = append(pairs, i)
	}
	if len(pairs) == 0 {
		return nil, ""
	}
	return pairs, "port types assumed from position in the tree (config space not readable)"
}

// noLinkReason says why a function has no link to judge.
func noLinkReason(ends []*End, rootBus string) string {
	d := ends[len(ends)-1]
	if len(ends) == 1 {
		if d.Config != nil && d.Config.Express != nil && d.Config.Express.PortType == PortRCiEP {
			return "root complex integrated endpoint per PCIe capability port type"
		}
		if d.Class>>8 == 0x0604 {
			return "a bridge on root bus " + strings.TrimPrefix(rootBus, "pci") + ": its links run to the devices below it"
		}
		return "no upstream port: on root bus " + strings.TrimPrefix(rootBus, "pci")
	}
	return "no PCI Express link on the path (conventional PCI bridge or function)"
}

// end reads one function's attributes, once.
func (w *walker) end(addr, dir string) *End {
	if e, ok := w.ends[addr]; ok {
		return e
	}
	r := w.o.root
	e := &End{Address: Address(addr), dir: dir}
	w.ends[addr] = e
	if !r.Exists(dir) {
		e.Address = ""
		return e
	}
	if v, err := r.ReadHex(dir+"/vendor", 4); err == nil {
		e.VendorID = uint16(v)
	}
	if v, err := r.ReadHex(dir+"/device", 4); err == nil {
		e.DeviceID = uint16(v)
	}
	if v, err := r.ReadHex(dir+"/class", 6); err == nil {
		e.Class = v
	}
	e.Link = readLinkAttrs(r, dir)
	if t, err := r.Readlink(dir + "/physfn"); err == nil && isAddress(path.Base(t)) {
		e.PhysFn = Address(path.Base(t))
	}
	e.AER = readAER(r, dir)
	if c, note := readConfigFile(r, dir+"/config"); c == nil {
		e.ConfigNote = note
	} else if e.VendorID != 0 && c.VendorID != e.VendorID || e.DeviceID != 0 && c.DeviceID != e.DeviceID {
		e.ConfigNote = fmt.Sprintf("%sits header names %04x:%04x, the vendor and device files %04x:%04x", ConfigDamaged, c.VendorID, c.DeviceID, e.VendorID, e.DeviceID)
	} else {
		e.Config = c
		e.ConfigNote = note
		// Fill each ID the sysfs files did not give from the config header.
		if e.VendorID == 0 {
			e.VendorID = c.VendorID
		}
		if e.DeviceID == 0 {
			e.DeviceID = c.DeviceID
		}
		if e.Class == 0 {
			e.Class = c.Class
		}
		if x := c.Express; x != nil {
			pt := x.PortType
			e.PortType = &pt
			e.MaxPayload, e.MaxReadRequest = x.MaxPayload, x.MaxReadRequest
		}
	}
	if w.o.namer != nil {
		e.Name = w.o.namer(e.VendorID, e.DeviceID)
	}
	return e
}

// guessUnread counts a function whose class could not be read as a
// network function when a network function of the same device (bus and
// slot) has its vendor:device ID: the functions of a multi-port NIC.
func (w *walker) guessUnread(fns []Function, dirs map[Address]string) {
	id := func(a Address) (uint64, bool) {
		v, err1 := w.o.root.ReadHex(dirs[a]+"/vendor", 4)
		d, err2 := w.o.root.ReadHex(dirs[a]+"/device", 4)
		return uint64(v)<<32 | uint64(d), err1 == nil && err2 == nil
	}
	for i := range fns {
		f := &fns[i]
		if f.ClassUnread == "" || f.Network {
			continue
		}
		mine, ok := id(f.Address)
		if !ok {
			continue
		}
		for _, g := range fns {
			if g.ClassUnread == "" && g.Network && g.Address.Slot() == f.Address.Slot() {
				if theirs, ok := id(g.Address); ok && theirs == mine {
					f.Network = true
					break
				}
			}
		}
	}
}

// functions lists every PCI function below the port at dir, depth first.
func (w *walker) functions(dir string) []Function {
	if fns, ok := w.fns[dir]; ok {
		return fns
	}
	fns := []Function{}
	// A function appears once; a name seen again is a symlink loop or a
	// copy in a hostile snapshot, and is not walked twice.
	seen := map[string]bool{}
	dirs := map[Address]string{} // network and unread functions' directories
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		if depth > maxDepth {
			return
		}
		names, err := w.o.root.ReadDir(d)
		if err != nil {
			return
		}
		for _, n := range names {
			if !isAddress(n) || seen[n] || len(fns) >= maxFunctions {
				continue
			}
			seen[n] = true
			sub := d + "/" + n
			if m, err := w.o.root.Mode(sub); err != nil || m&fs.ModeSymlink != 0 {
				continue // sysfs nests functions as directories, never links
			}
			cls, err := w.o.root.ReadHex(sub+"/class", 6)
			f := Function{Address: Address(n), Class: cls, Network: cls>>16 == 0x02, Bridge: cls>>8 == 0x0604}
			if !f.Bridge {
				if l := readLinkAttrs(w.o.root, sub); l.CurrentSpeed > 0 && l.CurrentWidth > 0 {
					f.Link = &l
				}
			}
			if err != nil {
				f = Function{Address: Address(n), ClassUnread: err.Error(), Network: w.o.root.Exists(sub + "/net")}
				dirs[f.Address] = sub
			} else if f.Network {
				dirs[f.Address] = sub
			}
			fns = append(fns, f)
			walk(sub, depth+1)
		}
	}
	walk(dir, 0)
	w.guessUnread(fns, dirs)
	sort.Slice(fns, func(i, j int) bool { return fns[i].Address < fns[j].Address })
	w.fns[dir] = fns
	return fns
}
