package pcie

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/text"
)

// LinkAttrs are a PCI function's link attributes as sysfs gives them
// (current_link_speed, current_link_width, max_link_speed, max_link_width).
// A speed of 0 or a width of 0 means unknown or absent; Missing says which.
type LinkAttrs struct {
	CurrentSpeed float64 `json:"current_speed_gts"`
	CurrentWidth int     `json:"current_width"`
	MaxSpeed     float64 `json:"max_speed_gts"`
	MaxWidth     int     `json:"max_width"`
	// Missing names each attribute that gave no value, with the reason
	// ("max_link_speed: absent", "current_link_speed: Unknown").
	Missing []string `json:"missing,omitempty"`
}

// ParseSpeed parses a sysfs link speed in either kernel format: "8.0 GT/s
// PCIe" (4.17 and later) or "8 GT/s" / "2.5 GT/s" (older kernels). It
// returns the speed in GT/s. "Unknown" (and the older "Unknown speed") gives
// 0 and ErrUnknownSpeed; anything else that is not a speed gives ErrBadSpeed.
func ParseSpeed(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "Unknown" || t == "Unknown speed" {
		return 0, ErrUnknownSpeed
	}
	num, ok := strings.CutSuffix(t, " PCIe")
	if !ok {
		num = t
	}
	num, ok = strings.CutSuffix(num, " GT/s")
	if !ok || !plainDecimal(num) {
		return 0, fmt.Errorf("%w: %q", ErrBadSpeed, text.Clip(s))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v > 1024 {
		return 0, fmt.Errorf("%w: %q", ErrBadSpeed, text.Clip(s))
	}
	return v, nil
}

// FormatGTs formats a link speed in GT/s as lspci prints it: the shortest
// decimal that reads back exactly, so "2.5", "5", "8", "16". Unknown (0)
// gives "0"; callers say "?" or "unknown" themselves.
func FormatGTs(gts float64) string { return strconv.FormatFloat(gts, 'f', -1, 64) }

// plainDecimal accepts "8", "2.5", "16.0": digits with at most one point,
// never exponents, signs, hex or underscores.
func plainDecimal(s string) bool {
	if s == "" || len(s) > 8 {
		return false
	}
	dot := false
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0 && i < len(s)-1:
			dot = true
		default:
			return false
		}
	}
	return true
}

// ParseWidth parses a sysfs link width ("4"; an "x4" is accepted too). Width
// 0 is valid: it is what an empty port or a down link reports. Widths above
// 63 (the register's 6 bits) give ErrBadWidth.
func ParseWidth(s string) (int, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "x")
	if t == "" || len(t) > 2 {
		return 0, fmt.Errorf("%w: %q", ErrBadWidth, text.Clip(s))
	}
	v := 0
	for _, c := range t {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %q", ErrBadWidth, text.Clip(s))
		}
		v = v*10 + int(c-'0')
	}
	if v > 63 {
		return 0, fmt.Errorf("%w: %q", ErrBadWidth, text.Clip(s))
	}
	return v, nil
}

// ReadLinkAttrs reads the four link attribute files of the PCI function addr
// ("0000:01:00.0"). Absent, unknown or malformed files leave their field at 0
// and are named in Missing; the error is only for a bad address
// (ErrBadAddress) or a function that does not exist (ErrNotFound).
func ReadLinkAttrs(ctx context.Context, addr Address, opts ...Option) (LinkAttrs, error) {
	bdf := string(addr)
	if err := ctx.Err(); err != nil {
		return LinkAttrs{}, err
	}
	if !isAddress(bdf) {
		return LinkAttrs{}, fmt.Errorf("%w: %q", ErrBadAddress, text.Clip(bdf))
	}
	o := buildOptions(opts)
	dir := "/sys/bus/pci/devices/" + bdf
	if !o.root.Exists(dir) {
		return LinkAttrs{}, fmt.Errorf("%w: %s", ErrNotFound, bdf)
	}
	return readLinkAttrs(o.root, dir), nil
}

// readLinkAttrs reads the link files in the sysfs directory dir.
func readLinkAttrs(r fsroot.Root, dir string) LinkAttrs {
	var la LinkAttrs
	speed := func(name string) float64 {
		s, err := r.ReadString(dir + "/" + name)
		if err != nil {
			la.Missing = append(la.Missing, name+": "+readReason(err))
			return 0
		}
		v, err := ParseSpeed(s)
		if errors.Is(err, ErrUnknownSpeed) {
			la.Missing = append(la.Missing, name+": Unknown")
		} else if err != nil {
			la.Missing = append(la.Missing, fmt.Sprintf("%s: malformed %q", name, text.Clip(s)))
		}
		return v
	}
	width := func(name string) int {
		s, err := r.ReadString(dir + "/" + name)
		if err != nil {
			la.Missing = append(la.Missing, name+": "+readReason(err))
			return 0
		}
		v, err := ParseWidth(s)
		if err != nil {
			la.Missing = append(la.Missing, fmt.Sprintf("%s: malformed %q", name, text.Clip(s)))
		}
		return v
	}
	la.CurrentSpeed = speed("current_link_speed")
	la.CurrentWidth = width("current_link_width")
	la.MaxSpeed = speed("max_link_speed")
	la.MaxWidth = width("max_link_width")
	return la
}

// readReason says briefly why a file gave no value.
func readReason(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "absent"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	default:
		return err.Error()
	}
}
