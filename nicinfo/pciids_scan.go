package nicinfo

// The pci.ids scanner: one pass that keeps only the names a PCIQuery asks
// for.

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
)

// scanPCIIDsReader reads the names for q from the text of a pci.ids file. Lines it
// cannot read are skipped, as lspci does; it fails only on a read error.
func scanPCIIDsReader(r io.Reader, q *PCIQuery) (*PCINames, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPCIIDs+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPCIIDs {
		return nil, fmt.Errorf("%w: pci.ids larger than %d bytes", ErrMalformed, maxPCIIDs)
	}
	return scanPCIIDs(data, q), nil
}

// scanPCIIDs finds each wanted vendor's block (and each wanted class's)
// with one fast substring search per ID and parses only those lines, so the
// cost is a few memchr-speed passes, not a parse of the whole file. IDs are
// matched in lower-case hex, as pci.ids writes them.
func scanPCIIDs(data []byte, q *PCIQuery) *PCINames {
	n := &PCINames{
		vendors:  map[uint16]string{},
		devices:  map[uint32]string{},
		subs:     map[uint64]string{},
		classes:  map[uint8]string{},
		subclass: map[uint16]string{},
	}
	if q == nil {
		return n
	}
	for v := range q.vendors {
		blk := vendorBlock(data, v)
		if blk == nil {
			continue
		}
		line, rest := nextLine(blk)
		if _, name, ok := idName(line, 4); ok {
			n.vendors[v] = name
		}
		scanVendor(rest, v, q, n)
	}
	bases := map[uint8]bool{}
	for c := range q.classes {
		bases[uint8(c>>8)] = true
	}
	for c := range bases {
		blk := lastBlock(data, fmt.Sprintf("C %02x  ", c))
		if blk == nil {
			continue
		}
		line, rest := nextLine(blk)
		if _, name, ok := idName(line[2:], 2); ok {
			n.classes[c] = name
		}
		for len(rest) > 0 && rest[0] == '\t' {
			line, rest = nextLine(rest)
			if len(line) > 1 && line[1] == '\t' {
				continue // programming interfaces
			}
			if id, name, ok := idName(line[1:], 2); ok && q.classes[uint16(c)<<8|uint16(id)] {
				n.subclass[uint16(c)<<8|uint16(id)] = name
			}
		}
	}
	return n
}

// vendorBlock returns data from vendor v's line, or nil. pci.ids lists
// vendors in ascending order, so a binary search over byte offsets finds it
// in a few dozen line hops; if that misses (a file out of order, or a vendor
// it lacks), a plain search decides.
func vendorBlock(data []byte, v uint16) []byte {
	lo, hi := 0, len(data)
	for lo < hi {
		mid := lo + (hi-lo)/2
		off, id, ok := vendorLineFrom(data, mid, hi)
		switch {
		case !ok:
			hi = mid
		case id < uint32(v):
			lo = off + 1
		case id > uint32(v):
			hi = mid
		default:
			return data[off:]
		}
	}
	prefix := fmt.Sprintf("%04x  ", v)
	if bytes.HasPrefix(data, []byte(prefix)) {
		return data
	}
	if i := bytes.Index(data, []byte("\n"+prefix)); i >= 0 {
		return data[i+1:]
	}
	return nil
}

// vendorLineFrom finds the first vendor line ("8086  Intel ...") that starts
// at or after from and before end.
func vendorLineFrom(data []byte, from, end int) (off int, id uint32, ok bool) {
	i := from
	if i > 0 && data[i-1] != '\n' {
		j := bytes.IndexByte(data[i:end], '\n')
		if j < 0 {
			return 0, 0, false
		}
		i += j + 1
	}
	for i < end {
		if v, rest, ok := hexField(data[i:], 4); ok && len(rest) > 1 && rest[0] == ' ' && rest[1] == ' ' {
			return i, v, true
		}
		j := bytes.IndexByte(data[i:end], '\n')
		if j < 0 {
			return 0, 0, false
		}
		i += j + 1
	}
	return 0, 0, false
}

// lastBlock returns data from the last line that starts with prefix, or nil.
// Classes sit at the end of pci.ids, so searching backwards is quick.
func lastBlock(data []byte, prefix string) []byte {
	if i := bytes.LastIndex(data, []byte("\n"+prefix)); i >= 0 {
		return data[i+1:]
	}
	if bytes.HasPrefix(data, []byte(prefix)) {
		return data
	}
	return nil
}

func nextLine(b []byte) (line, rest []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil
	}
	return b[:i], b[i+1:]
}

// scanVendor reads the device and subsystem lines that follow a vendor
// line, up to the next line that does not start with a tab. Comment lines
// inside the block are skipped.
func scanVendor(b []byte, vendor uint16, q *PCIQuery, n *PCINames) {
	var device uint16
	wanted := false
	for len(b) > 0 && (b[0] == '\t' || b[0] == '#') {
		var line []byte
		line, b = nextLine(b)
		if line[0] == '#' {
			continue
		}
		if len(line) > 1 && line[1] == '\t' {
			if !wanted {
				continue
			}
			// "\t\tsvid sdid  Name"
			sv, rest, ok := hexField(line[2:], 4)
			if !ok || len(rest) == 0 || rest[0] != ' ' {
				continue
			}
			sd, name, ok := idName(rest[1:], 4)
			if !ok {
				continue
			}
			if k := subKey(vendor, device, uint16(sv), uint16(sd)); q.subs[k] {
				n.subs[k] = name
			}
			continue
		}
		id, _, ok := hexField(line[1:], 4)
		if !ok {
			wanted = false
			continue
		}
		device = uint16(id)
		k := uint32(vendor)<<16 | uint32(device)
		if wanted = q.devices[k]; !wanted {
			continue
		}
		if _, name, ok := idName(line[1:], 4); ok {
			n.devices[k] = name
		}
	}
}

// idName parses "<digits hex>  Name".
func idName(b []byte, digits int) (uint32, string, bool) {
	id, rest, ok := hexField(b, digits)
	if !ok || len(rest) < 2 || rest[0] != ' ' {
		return 0, "", false
	}
	// A hand-made pci.ids can hold escape sequences; names go to a terminal.
	name := strings.TrimSpace(text.Clean(string(rest[1:])))
	if name == "" {
		return 0, "", false
	}
	return id, name, true
}

// hexField parses exactly digits hex digits at the start of b.
func hexField(b []byte, digits int) (uint32, []byte, bool) {
	if len(b) < digits {
		return 0, nil, false
	}
	var v uint32
	for _, c := range b[:digits] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, nil, false
		}
		v = v<<4 | uint32(d)
	}
	return v, b[digits:], true
}
