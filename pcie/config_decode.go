package pcie

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Capability offsets and IDs.
const (
	capPtrOffset   = 0x34
	capPtrCardBus  = 0x14
	capIDExpress   = 0x10
	extCapStart    = 0x100
	extCapIDVSEC   = 0x000b
	vsecIDIntelTBT = 0x1234
	vendorIntel    = 0x8086
	// maxConfig is the largest configuration space (PCI Express's).
	maxConfig = 4096
)

// space is a configuration space as the decoders read it: bytes asked
// for by offset. From a file (ReadConfig), each range is read when first
// asked for: every dword is a config access, a VM exit in a guest, and
// the decoders need a few dozen of the 64 to 1024. size is what is
// readable: a read that comes back short (the kernel gives a reader
// without root the 64-byte header) makes it smaller.
type space struct {
	b    []byte
	size int
	r    io.ReaderAt // nil when b holds every byte
	have [maxConfig / 4]bool
	err  error // why a read failed
	read int   // bytes read through r
}

// at returns the n bytes at off, or nil when they are not all readable.
func (s *space) at(off, n int) []byte {
	if off < 0 || n < 0 || off+n > s.size {
		return nil
	}
	if s.r != nil && !s.fetch(off, n) {
		return nil
	}
	return s.b[off : off+n]
}

// fetch reads the dwords of [off, off+n) not read yet, in one read.
func (s *space) fetch(off, n int) bool {
	lo, hi := off/4, (off+n+3)/4
	for lo < hi && s.have[lo] {
		lo++
	}
	for hi > lo && s.have[hi-1] {
		hi--
	}
	if lo == hi {
		return true
	}
	start, end := lo*4, min(hi*4, s.size)
	got, err := s.r.ReadAt(s.b[start:end], int64(start))
	s.read += got
	for i := lo; i < lo+got/4; i++ {
		s.have[i] = true
	}
	if got < end-start {
		if err != nil && !errors.Is(err, io.EOF) {
			s.err = err
		}
		s.size = start + got&^3 // what is readable ends here
		return off+n <= s.size
	}
	return true
}

// u16 and u32 are the little-endian values at off (the caller has asked
// for the bytes with at).
func u16(b []byte, off int) uint16 { return binary.LittleEndian.Uint16(b[off:]) }
func u32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

// DecodeConfig decodes a configuration space as read from sysfs. It needs the
// 64-byte header (ErrConfigTruncated otherwise). When only the header was
// readable, the result has CapsReadable false and a Note; when the function
// has no PCI Express capability (conventional PCI), Express is nil. A
// capability list that loops or points outside the header-to-end range gives
// ErrCapList; all ones gives ErrNoDevice.
func DecodeConfig(b []byte) (*Config, error) {
	return decodeConfig(&space{b: b, size: len(b)})
}

// ReadConfig decodes the configuration space of size bytes that r reads
// (the sysfs config file), as DecodeConfig, reading only what it decodes:
// the header, the capability headers and the PCI Express capability, and
// for an Intel function the extended capability headers. Config.Size is
// the size readable: reads past the 64-byte header that come back empty
// (a reader without root) make it 64.
func ReadConfig(r io.ReaderAt, size int) (*Config, error) {
	size = min(max(size, 0), maxConfig)
	s := &space{b: make([]byte, size), size: size, r: r}
	c, err := decodeConfig(s)
	if s.err != nil && err == nil {
		err = s.err
	}
	return c, err
}

func decodeConfig(s *space) (*Config, error) {
	b := s.at(0, 64)
	if b == nil {
		if s.err != nil {
			return nil, s.err
		}
		return nil, fmt.Errorf("%w: %d bytes, need the 64-byte header", ErrConfigTruncated, s.size)
	}
	c := &Config{
		VendorID:   u16(b, 0),
		DeviceID:   u16(b, 2),
		Revision:   b[8],
		Class:      uint32(b[0x0b])<<16 | uint32(b[0x0a])<<8 | uint32(b[0x09]),
		HeaderType: b[0x0e] & 0x7f,
	}
	defer func() { c.Size = s.size }()
	if c.VendorID == 0xffff {
		return nil, ErrNoDevice
	}
	c.CapsReadable = true
	if u16(b, 6)&0x10 == 0 { // no capability list at all
		return c, nil
	}
	ptrAt := capPtrOffset
	if c.HeaderType == 2 {
		ptrAt = capPtrCardBus
	}
	ptr := int(b[ptrAt] & 0xfc)
	if s.at(ptr, 1) == nil && s.size <= 64 {
		c.CapsReadable = false
		c.Note = notReadableNote
		return c, nil
	}
	off, err := findCap(s, ptr, capIDExpress)
	if err != nil {
		return nil, err
	}
	if off == 0 {
		return c, nil
	}
	if c.Express, err = decodeExpress(s, off); err != nil {
		return nil, err
	}
	c.Thunderbolt, c.Note = findTBT(s, c.VendorID)
	return c, nil
}

// findCap walks the standard capability list from ptr and returns the
// offset of capability id, or 0 when the list ends without it.
func findCap(s *space, ptr, id int) (int, error) {
	var seen [256]bool
	for ptr != 0 {
		if ptr < 0x40 || ptr > 0xfc {
			return 0, fmt.Errorf("%w: pointer 0x%02x outside 0x40..0xfc", ErrCapList, ptr)
		}
		h := s.at(ptr, 2)
		if h == nil {
			return 0, fmt.Errorf("%w: capability pointer 0x%02x beyond %d bytes", ErrConfigTruncated, ptr, s.size)
		}
		if seen[ptr] {
			return 0, fmt.Errorf("%w: loop at 0x%02x", ErrCapList, ptr)
		}
		seen[ptr] = true
		switch int(h[0]) {
		case id:
			return ptr, nil
		case 0xff:
			return 0, fmt.Errorf("%w: capability ID 0xff at 0x%02x", ErrCapList, ptr)
		}
		ptr = int(h[1] & 0xfc)
	}
	return 0, nil
}

// decodeExpress decodes the PCI Express capability at off.
func decodeExpress(s *space, off int) (*Express, error) {
	b := s.at(off, 0x14) // through LnkSta
	if b == nil {
		return nil, fmt.Errorf("%w: Express capability at 0x%x runs past %d bytes", ErrConfigTruncated, off, s.size)
	}
	capReg := u16(b, 2)
	e := &Express{
		Offset:   off,
		Version:  int(capReg & 0xf),
		PortType: PortType(capReg >> 4 & 0xf),
	}
	devCap := u32(b, 4)
	devCtl := u16(b, 8)
	e.MaxPayloadSupported = 128 << (devCap & 7)
	e.MaxPayload = 128 << (devCtl >> 5 & 7)
	e.MaxReadRequest = 128 << (devCtl >> 12 & 7)
	if e.PortType == PortRCiEP || e.PortType == PortRCEventCollector {
		return e, nil
	}
	e.HasLink = true
	lnkCap := u32(b, 0x0c)
	lnkCtl := u16(b, 0x10)
	lnkSta := u16(b, 0x12)
	e.LinkCapSpeed = speedOf(lnkCap & 0xf)
	e.LinkCapWidth = int(lnkCap >> 4 & 0x3f)
	e.ASPMSupport = ASPM(lnkCap >> 10 & 3)
	e.PortNumber = int(lnkCap >> 24)
	e.ASPMEnabled = ASPM(lnkCtl & 3)
	e.RCB = 64
	if lnkCtl&0x8 != 0 {
		e.RCB = 128
	}
	e.LinkSpeed = speedOf(uint32(lnkSta & 0xf))
	e.LinkWidth = int(lnkSta >> 4 & 0x3f)
	if e.Version < 2 {
		return e, nil
	}
	b2 := s.at(off+0x2c, 6) // LnkCap2, LnkCtl2
	if b2 == nil {
		return e, nil
	}
	lnkCap2 := u32(b2, 0)
	for bit := 1; bit <= 7; bit++ {
		if lnkCap2&(1<<bit) != 0 {
			e.SupportedSpeeds = append(e.SupportedSpeeds, speedOf(uint32(bit)))
		}
	}
	// A target speed hardwired to 0 means only 2.5 GT/s is supported
	// (as lspci reads it).
	if t := u16(b2, 4) & 0xf; t == 0 {
		e.TargetSpeed = 2.5
	} else {
		e.TargetSpeed = speedOf(uint32(t))
	}
	return e, nil
}

// findTBT looks for Intel's Thunderbolt VSEC in the extended capabilities.
// A broken extended list ends the search with a note instead of an error:
// the standard capabilities already decoded stay valid.
func findTBT(s *space, vendor uint16) (bool, string) {
	if vendor != vendorIntel || s.at(extCapStart, 8) == nil {
		return false, ""
	}
	var seen [maxConfig / 4]bool
	for off := extCapStart; off != 0; {
		if off < extCapStart {
			return false, fmt.Sprintf("extended capability pointer 0x%x outside the config space", off)
		}
		b := s.at(off, 8)
		if b == nil {
			return false, fmt.Sprintf("extended capability pointer 0x%x outside the config space", off)
		}
		if seen[off/4] {
			return false, fmt.Sprintf("extended capability list loops at 0x%x", off)
		}
		seen[off/4] = true
		h := u32(b, 0)
		if h == 0 || h == 0xffffffff {
			return false, ""
		}
		if h&0xffff == extCapIDVSEC && u32(b, 4)&0xffff == vsecIDIntelTBT {
			return true, ""
		}
		off = int(h>>20) & 0xffc
	}
	return false, ""
}
