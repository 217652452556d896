package pcie

import (
	"fmt"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
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
	return "", fmt.Errorf("%w: %q", ErrBadAddress, text.Clip(s))
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

// Valid reports whether a is in canonical form, as the kernel names a PCI
// function in sysfs; use it to test a directory or link name as it stands.
func (a Address) Valid() bool {
	return isAddress(string(a)) && strings.ToLower(string(a)) == string(a)
}

// isHostBridge reports whether s names a host bridge directory as the kernel
// does ("pci%04x:%02x": "pci0000:00", VMD's "pci10000:e0").
func isHostBridge(s string) bool {
	t, ok := strings.CutPrefix(s, "pci")
	i := strings.IndexByte(t, ':')
	return ok && i >= 4 && i <= 8 && len(t) == i+3 && isHex(t[:i]) && isHex(t[i+1:])
}

// isHex reports whether s is one or more hex digits.
func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}
