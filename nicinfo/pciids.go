package nicinfo

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/text"
)

// maxPCIIDs bounds a pci.ids file (the 2025 file is 1.4 MB).
const maxPCIIDs = 64 << 20

// PCIQuery lists the IDs whose names are wanted; only those are kept while
// scanning pci.ids, so a lookup costs one pass over the file and no map of
// the whole database.
type PCIQuery struct {
	vendors map[uint16]bool
	devices map[uint32]bool // vendor<<16 | device
	subs    map[uint64]bool // vendor<<48 | device<<32 | subvendor<<16 | subdevice
	classes map[uint16]bool // class<<8 | subclass
}

// Add asks for the names of a function's vendor, device, subsystem and class
// (24-bit class code).
func (q *PCIQuery) Add(vendor, device, subVendor, subDevice uint16, class uint32) {
	if q.vendors == nil {
		q.vendors = map[uint16]bool{}
		q.devices = map[uint32]bool{}
		q.subs = map[uint64]bool{}
		q.classes = map[uint16]bool{}
	}
	q.vendors[vendor] = true
	q.vendors[subVendor] = true
	q.devices[uint32(vendor)<<16|uint32(device)] = true
	q.subs[subKey(vendor, device, subVendor, subDevice)] = true
	q.classes[uint16(class>>8)] = true
}

func subKey(v, d, sv, sd uint16) uint64 {
	return uint64(v)<<48 | uint64(d)<<32 | uint64(sv)<<16 | uint64(sd)
}

// PCINames holds the names found for a PCIQuery.
type PCINames struct {
	source   string // the file the names came from
	vendors  map[uint16]string
	devices  map[uint32]string
	subs     map[uint64]string
	classes  map[uint8]string
	subclass map[uint16]string
}

// Vendor returns the vendor's name, or "".
func (n *PCINames) Vendor(v uint16) string {
	if n == nil {
		return ""
	}
	return n.vendors[v]
}

// Device returns the device's name, or "".
func (n *PCINames) Device(v, d uint16) string {
	if n == nil {
		return ""
	}
	return n.devices[uint32(v)<<16|uint32(d)]
}

// Subsystem returns the name pci.ids gives the subsystem (sv, sd) of device
// (v, d), matching both the subsystem vendor and the subsystem device; "" if
// pci.ids has no entry for exactly that pair.
func (n *PCINames) subsystem(v, d, sv, sd uint16) string {
	if n == nil {
		return ""
	}
	return n.subs[subKey(v, d, sv, sd)]
}

// Class returns the subclass name for a 24-bit class code ("Ethernet
// controller"), else the base class name, else "".
func (n *PCINames) class(class uint32) string {
	if n == nil {
		return ""
	}
	if s := n.subclass[uint16(class>>8)]; s != "" {
		return s
	}
	return n.classes[uint8(class>>16)]
}

// fill sets f's vendor, device, subsystem and class names.
func (n *PCINames) fill(f *PCIFunction) {
	f.VendorName = n.Vendor(f.VendorID)
	f.DeviceName = n.Device(f.VendorID, f.DeviceID)
	f.SubsystemName = n.subsystem(f.VendorID, f.DeviceID, f.SubsystemVendor, f.SubsystemDevice)
	f.ClassName = n.class(f.Class)
}

// pciIDsCandidates are searched in order. pcidb also looks in
// ~/.cache/pci.ids first; a stale cache there would beat the distro file, so
// nicdiag does not.
var pciIDsCandidates = []string{
	"/usr/share/misc/pci.ids",
	"/usr/share/hwdata/pci.ids",
	"/usr/share/misc/pci.ids.gz",
	"/usr/share/hwdata/pci.ids.gz",
}

// loadPCINames finds pci.ids (explicit, else in the snapshot root, else on
// the host; see WithPCIIDs) and reads the names for q. With no file it
// returns an error wrapping ErrNoPCIIDs. Every candidate is opened through
// fsroot: the snapshot's own inside the snapshot (a symlink out of it is
// ErrEscape, not a quiet read of the host's file), the host's and an
// explicit one as host files; none may be a FIFO or other non-regular file.
func loadPCINames(root fsroot.Root, explicit string, q *PCIQuery) (*PCINames, error) {
	f, name, err := openPCIIDs(root, explicit)
	if err != nil {
		return nil, err
	}
	names, err := readPCIIDs(f, name, q)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return names, nil
}

// openPCIIDs opens the first pci.ids candidate that exists (see
// loadPCINames) and returns it with its name.
func openPCIIDs(root fsroot.Root, explicit string) (*os.File, string, error) {
	type candidate struct {
		name string // the file as the messages and Source name it
		open func() (*os.File, error)
	}
	var cands []candidate
	if explicit != "" {
		cands = []candidate{{explicit, func() (*os.File, error) { return fsroot.OpenFile(explicit) }}}
	} else {
		host := fsroot.New("/")
		if !root.Live() {
			for _, c := range pciIDsCandidates {
				cands = append(cands, candidate{root.Path(c), func() (*os.File, error) { return root.Open(c) }})
			}
		}
		for _, c := range pciIDsCandidates {
			cands = append(cands, candidate{c, func() (*os.File, error) { return host.Open(c) }})
		}
	}
	for _, c := range cands {
		f, err := c.open()
		if errors.Is(err, fs.ErrNotExist) && explicit == "" {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return f, c.name, nil
	}
	searched := make([]string, len(cands))
	for i, c := range cands {
		searched[i] = c.name
	}
	return nil, "", fmt.Errorf("%w (searched %s)", ErrNoPCIIDs, strings.Join(searched, ", "))
}

// PCIIDsFile says which pci.ids List would take names from, and its
// header's version and date ("" when the header has none).
type PCIIDsFile struct {
	Path    string `json:"path"`
	Version string `json:"version,omitempty"`
	Date    string `json:"date,omitempty"`
}

// FindPCIIDs returns the pci.ids that List would use for these options
// (the explicit one, else the snapshot's own, else the host's), reading
// only its header. Without a pci.ids it returns an error wrapping
// ErrNoPCIIDs.
func FindPCIIDs(opts ...Option) (PCIIDsFile, error) {
	o := buildOptions(opts)
	f, name, err := openPCIIDs(o.root, o.pciIDs)
	if err != nil {
		return PCIIDsFile{}, wrapErr(err)
	}
	defer f.Close()
	out := PCIIDsFile{Path: name}
	var r io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return out, wrapErr(fmt.Errorf("%s: %w", name, err))
		}
		defer zr.Close()
		r = zr
	}
	head, _ := io.ReadAll(io.LimitReader(r, 4096))
	for _, line := range strings.Split(string(head), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "#") {
			if line != "" {
				break // the header is the leading comment block
			}
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
		if !ok {
			continue
		}
		v = text.Clip(strings.TrimSpace(v))
		switch strings.TrimSpace(k) {
		case "Version":
			out.Version = v
		case "Date":
			out.Date = v
		}
	}
	return out, nil
}

func readPCIIDs(f *os.File, p string, q *PCIQuery) (*PCINames, error) {
	var n *PCINames
	if strings.HasSuffix(p, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		if n, err = scanPCIIDsReader(zr, q); err != nil {
			return nil, err
		}
	} else {
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if fi.Size() > maxPCIIDs {
			return nil, fmt.Errorf("%w: pci.ids larger than %d bytes", ErrMalformed, maxPCIIDs)
		}
		if n, err = scanPCIIDsAt(f, fi.Size(), q); err != nil {
			return nil, err
		}
	}
	n.source = p
	return n, nil
}

// LookupNames reads the names q asks for from the pci.ids that List would
// use for these options (the snapshot's own, else the host's): for naming
// devices that are not NICs, such as the ports on a NIC's PCIe path.
// Without a pci.ids it returns an error wrapping ErrNoPCIIDs.
func LookupNames(q *PCIQuery, opts ...Option) (*PCINames, error) {
	o := buildOptions(opts)
	names, err := loadPCINames(o.root, o.pciIDs, q)
	return names, wrapErr(err)
}
