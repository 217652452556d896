package pcie

import (
	"fmt"
	"strings"
)

// Address is a PCI function address in the kernel's canonical form,
// "DDDD:BB:DD.F" in lower case (a domain of 4 to 8 hex digits, as Intel VMD
// domains have 5). Values made by ParseAddress are always canonical; the
// zero Address means none.
type Address string

// ParseAddress parses a PCI function address. The domain may be left out
// ("01:00.0" is "0000:01:00.0"), and hex digits may be upper case. Anything
// else wraps ErrBadAddress.
func ParseAddress(s string) (Address, error) {
	a := strings.ToLower(s)
	if isAddress(a) {
		return Address(a), nil
	}
	if isAddress("0000:" + a) {
		return Address("0000:" + a), nil
	}
	return "", fmt.Errorf("%w: %q", ErrBadAddress, clip(s))
}

// String returns the address as the kernel writes it.
func (a Address) String() string { return string(a) }

// Slot returns the address without its function number ("0000:01:00"): the
// device whose functions share a card.
func (a Address) Slot() string {
	if i := strings.LastIndexByte(string(a), '.'); i > 0 {
		return string(a[:i])
	}
	return string(a)
}

// isAddress reports whether s is "DDDD:BB:DD.F" with a domain of 4 to 8 hex
// digits.
func isAddress(s string) bool {
	i := strings.IndexByte(s, ':')
	if i < 4 || i > 8 || len(s) != i+8 || !isHex(s[:i]) {
		return false
	}
	t := s[i:] // ":BB:DD.F"
	if t[3] != ':' || t[6] != '.' || !isHex(t[1:3]) || !isHex(t[4:6]) {
		return false
	}
	return t[4] <= '1' && t[7] >= '0' && t[7] <= '7'
}

// Limiter names the end of a hop whose capability sets the hop's speed or
// width.
type Limiter string

// Limiters; "" means both ends agree, or one is unknown.
const (
	LimitDevice Limiter = "device"
	LimitPort   Limiter = "port"
)

// Valid reports whether a is in canonical form, as the kernel names a PCI
// function in sysfs; use it to test a directory or link name as it stands.
func (a Address) Valid() bool {
	return isAddress(string(a)) && strings.ToLower(string(a)) == string(a)
}
