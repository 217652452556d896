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

// scanPCIIDsReader reads the names for q from the text of a pci.ids file
// (a decompressed pci.ids.gz). Lines it cannot read are skipped, as lspci
// does; it fails only on a read error.
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

// scanPCIIDs is scanPCIIDsAt on text in memory.
func scanPCIIDs(data []byte, q *PCIQuery) *PCINames {
	n, _ := scanPCIIDsAt(bytes.NewReader(data), int64(len(data)), q)
	return n
}

// scanPCIIDsAt finds each wanted vendor's block with a binary search over
// the file's byte offsets, and each wanted class's block with a search
// back from the end, and parses only those lines: a few dozen reads of
// idsWindow bytes and the wanted blocks, not the whole file. IDs are
// matched in lower-case hex, as pci.ids writes them. A file that ends
// before size (truncated while read) ends the scan there; the error is a
// read's other than io.EOF.
func scanPCIIDsAt(r io.ReaderAt, size int64, q *PCIQuery) (*PCINames, error) {
	return scanWindowed(r, size, q, idsWindow)
}

// scanWindowed is scanPCIIDsAt with a window of window bytes (tests make
// it small, to cross its edges).
func scanWindowed(r io.ReaderAt, size int64, q *PCIQuery, window int) (*PCINames, error) {
	n := &PCINames{
		vendors:  map[uint16]string{},
		devices:  map[uint32]string{},
		subs:     map[uint64]string{},
		classes:  map[uint8]string{},
		subclass: map[uint16]string{},
	}
	if q == nil {
		return n, nil
	}
	x := &idsText{r: r, size: size, buf: make([]byte, window)}
	for v := range q.vendors {
		off, ok := x.vendorBlock(v)
		if !ok {
			continue
		}
		line, next, _ := x.line(off)
		if _, name, ok := idName(line, 4); ok {
			n.vendors[v] = name
		}
		x.scanVendor(next, v, q, n)
	}
	bases := map[uint8]bool{}
	for c := range q.classes {
		bases[uint8(c>>8)] = true
	}
	for c := range bases {
		off, ok := x.lastLine(fmt.Sprintf("C %02x  ", c))
		if !ok {
			continue
		}
		x.scanClass(off, c, q, n)
	}
	return n, x.err
}

// idsText reads pci.ids through a window of idsWindow bytes, by pread(2)
// (io.ReaderAt): never the whole file in memory (a fresh 1.4 MB buffer
// costs a process its page faults), and never mapped (a file that a
// writer truncates would turn the mapping's next page into SIGBUS; a read
// only comes up short).
type idsText struct {
	r    io.ReaderAt
	size int64  // what is left to read ends here; lowered when a read ends short
	buf  []byte // the window's memory
	off  int64  // the file offset of win
	win  []byte // the bytes read at off
	err  error  // the first read error other than io.EOF
}

// idsWindow is the bytes read at once; the longest line of the 2025
// pci.ids is 170 bytes.
const idsWindow = 16 << 10

// fill reads the window at off and reports whether it holds anything.
func (x *idsText) fill(off int64) bool {
	k, err := x.r.ReadAt(x.buf, off)
	if err != nil && err != io.EOF && x.err == nil {
		x.err = err
	}
	if k < len(x.buf) && off+int64(k) < x.size {
		x.size = off + int64(k) // the file ended early
	}
	x.off, x.win = off, x.buf[:k]
	return k > 0
}

// line returns the line at off, without its newline, and the offset of the
// next; ok is false past the end. A line longer than the window comes cut
// to it. The line is valid until the next call.
func (x *idsText) line(off int64) (line []byte, next int64, ok bool) {
	if off >= x.size || off < 0 {
		return nil, off, false
	}
	end := x.off + int64(len(x.win))
	if off < x.off || off >= end || (off > x.off && end < x.size && bytes.IndexByte(x.win[off-x.off:], '\n') < 0) {
		if !x.fill(off) {
			return nil, off, false
		}
		end = x.off + int64(len(x.win))
	}
	w := x.win[off-x.off:]
	if i := bytes.IndexByte(w, '\n'); i >= 0 {
		return w[:i], off + int64(i) + 1, true
	}
	if end >= x.size {
		return w, x.size, true // the last line, without a newline
	}
	long := append([]byte(nil), w...)
	for next = end; x.fill(next); next = x.off + int64(len(x.win)) {
		if i := bytes.IndexByte(x.win, '\n'); i >= 0 {
			return long, next + int64(i) + 1, true
		}
	}
	return long, x.size, true
}

// vendorBlock returns the offset of vendor v's line. pci.ids lists vendors
// in ascending order, so a binary search over byte offsets finds it in a
// few dozen line hops; if that misses (a file out of order, or a vendor it
// lacks), a plain search from the start decides.
func (x *idsText) vendorBlock(v uint16) (int64, bool) {
	lo, hi := int64(0), x.size
	for lo < hi {
		mid := lo + (hi-lo)/2
		off, id, ok := x.vendorLineFrom(mid, hi)
		switch {
		case !ok:
			hi = mid
		case id < uint32(v):
			lo = off + 1
		case id > uint32(v):
			hi = mid
		default:
			return off, true
		}
	}
	prefix := []byte(fmt.Sprintf("%04x  ", v))
	for off := int64(0); ; {
		line, next, ok := x.line(off)
		if !ok {
			return 0, false
		}
		if bytes.HasPrefix(line, prefix) {
			return off, true
		}
		off = next
	}
}

// vendorLineFrom finds the first vendor line ("8086  Intel ...") that
// starts at or after from and before end.
func (x *idsText) vendorLineFrom(from, end int64) (off int64, id uint32, ok bool) {
	i := from
	if i > 0 {
		_, i, ok = x.line(i - 1) // the line holding from-1 ends where the next starts
		if !ok {
			return 0, 0, false
		}
	}
	for i < end {
		line, next, ok := x.line(i)
		if !ok {
			return 0, 0, false
		}
		if v, rest, ok := hexField(line, 4); ok && len(rest) > 1 && rest[0] == ' ' && rest[1] == ' ' {
			return i, v, true
		}
		i = next
	}
	return 0, 0, false
}

// lastLine returns the offset of the last line that starts with prefix,
// searching windows back from the end (classes sit at the end of
// pci.ids).
func (x *idsText) lastLine(prefix string) (int64, bool) {
	pat := []byte("\n" + prefix)
	for end := x.size; end > 0; {
		start := max(0, end-int64(len(x.buf)))
		if !x.fill(start) {
			return 0, false
		}
		seg := x.win[:min(int64(len(x.win)), end-start)]
		if i := bytes.LastIndex(seg, pat); i >= 0 {
			return start + int64(i) + 1, true
		}
		if start == 0 {
			return 0, bytes.HasPrefix(seg, []byte(prefix))
		}
		end = start + int64(len(prefix)) // a match across start lies in the next window
	}
	return 0, false
}

// scanClass reads the class line at off and its subclass lines.
func (x *idsText) scanClass(off int64, c uint8, q *PCIQuery, n *PCINames) {
	line, next, ok := x.line(off)
	if !ok || len(line) < 2 {
		return // the file shrank since lastLine found it
	}
	if _, name, ok := idName(line[2:], 2); ok {
		n.classes[c] = name
	}
	for {
		line, after, ok := x.line(next)
		if !ok || len(line) == 0 || line[0] != '\t' {
			return
		}
		next = after
		if len(line) > 1 && line[1] == '\t' {
			continue // programming interfaces
		}
		if id, name, ok := idName(line[1:], 2); ok && q.classes[uint16(c)<<8|uint16(id)] {
			n.subclass[uint16(c)<<8|uint16(id)] = name
		}
	}
}

// scanVendor reads the device and subsystem lines that follow a vendor
// line, from off up to the next line that does not start with a tab.
// Comment lines inside the block are skipped.
func (x *idsText) scanVendor(off int64, vendor uint16, q *PCIQuery, n *PCINames) {
	var device uint16
	wanted := false
	for {
		line, next, ok := x.line(off)
		if !ok || len(line) == 0 || (line[0] != '\t' && line[0] != '#') {
			return
		}
		off = next
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
		d, ok := text.HexDigit(c)
		if !ok {
			return 0, nil, false
		}
		v = v<<4 | uint32(d)
	}
	return v, b[digits:], true
}
