package nicinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/nicdiag/nicdiag/internal/text"
)

// LinkErrorKind says what a damaged-frame counter counts.
type LinkErrorKind string

// Kinds of damaged frames.
const (
	// ErrCRC: frames whose FCS did not match (bit errors on the wire).
	ErrCRC LinkErrorKind = "crc"
	// ErrSymbol: invalid symbols (the PCS could not decode the line).
	ErrSymbol LinkErrorKind = "symbol"
	// ErrAlignment: frames not a whole number of octets (a framing
	// error).
	ErrAlignment LinkErrorKind = "alignment"
	// ErrLength: frames whose length field or size was wrong (runts,
	// giants, jabbers).
	ErrLength LinkErrorKind = "length"
)

// linkErrorStats are the drivers' `ethtool -S` names of damaged-frame
// counters (device-wide): Linux drivers/net/ethernet/ intel/igb
// igb_ethtool.c, intel/e1000e/ethtool.c (rx_crc_errors, rx_align_errors),
// intel/i40e/i40e_ethtool.c (port.rx_crc_errors, port.rx_length_errors,
// port.illegal_bytes), intel/ice/ice_ethtool.c (.nic suffix),
// mellanox/mlx5/core/en_stats.c (the _phy counters), broadcom/bnxt
// bnxt_ethtool.c (rx_fcs_err_frames, rx_align_err_frames),
// realtek/r8169_main.c (align_errors).
var linkErrorStats = map[string]LinkErrorKind{
	"rx_crc_errors": ErrCRC, "rx_align_errors": ErrAlignment, "rx_symbol_errors": ErrSymbol,
	"port.rx_crc_errors": ErrCRC, "port.rx_length_errors": ErrLength, "port.illegal_bytes": ErrSymbol,
	"rx_crc_errors.nic": ErrCRC, "rx_length_errors.nic": ErrLength, "illegal_bytes.nic": ErrSymbol,
	"rx_crc_errors_phy": ErrCRC, "rx_symbol_err_phy": ErrSymbol, "rx_in_range_len_errors_phy": ErrLength,
	"rx_fcs_err_frames": ErrCRC, "rx_align_err_frames": ErrAlignment,
	"align_errors": ErrAlignment,
}

// IsLinkErrorStat reports whether name is a driver's damaged-frame counter
// nicdiag reads (KeepStats keeps it with the loss counters).
func IsLinkErrorStat(name string) bool {
	_, ok := linkErrorStats[name]
	return ok
}

// linkErrorFiles are the interface statistics of damaged frames
// (Documentation/ABI/testing/sysfs-class-net-statistics): rx_crc_errors,
// rx_frame_errors (alignment on most drivers), rx_length_errors.
var linkErrorFiles = map[string]LinkErrorKind{"rx_crc_errors": ErrCRC, "rx_frame_errors": ErrAlignment, "rx_length_errors": ErrLength}

// LinkErrors are an interface's damaged-frame counters since its driver
// started counting, with the frames it received to set them against.
type LinkErrors struct {
	RXPackets uint64 `json:"rx_packets"`
	// Counters are every damaged-frame counter read, by "sysfs:NAME" or
	// "ethtool:NAME", with its kind.
	Counters []LinkErrorCounter `json:"counters"`
}

// LinkErrorCounter is one damaged-frame counter.
type LinkErrorCounter struct {
	Name  string        `json:"name"`
	Kind  LinkErrorKind `json:"kind"`
	Value uint64        `json:"value"`
}

// ByKind returns, per kind, the largest counter of that kind (the sysfs
// and driver counters of one kind count the same frames) and its name.
func (l *LinkErrors) ByKind() map[LinkErrorKind]LinkErrorCounter {
	out := map[LinkErrorKind]LinkErrorCounter{}
	for _, c := range l.Counters {
		if c.Value > out[c.Kind].Value || out[c.Kind].Name == "" {
			out[c.Kind] = c
		}
	}
	return out
}

// ReadLinkErrors reads iface's damaged-frame statistics under the root
// (option.Root) and joins the driver's among driverStats. Without a
// statistics directory it returns an error matching fs.ErrNotExist; a
// counter file that is not a number is ErrMalformed.
func ReadLinkErrors(iface string, driverStats map[string]uint64, opts ...Option) (*LinkErrors, error) {
	if !validIfaceName(iface) {
		return nil, wrapErr(fmt.Errorf("%w: interface name %q", ErrMalformed, text.Clip(iface)))
	}
	o := applyOptions(opts)
	dir := "/sys/class/net/" + iface + "/statistics/"
	rx, err := o.root.ReadInt(dir + "rx_packets")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, wrapErr(err)
		}
		return nil, wrapErr(fmt.Errorf("%w: %s: %v", ErrMalformed, dir+"rx_packets", err))
	}
	l := &LinkErrors{RXPackets: uint64(max(rx, 0))}
	for _, name := range []string{"rx_crc_errors", "rx_frame_errors", "rx_length_errors"} {
		v, err := o.root.ReadInt(dir + name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil || v < 0:
			return nil, wrapErr(fmt.Errorf("%w: %s: %v", ErrMalformed, dir+name, err))
		}
		l.Counters = append(l.Counters, LinkErrorCounter{Name: "sysfs:" + name, Kind: linkErrorFiles[name], Value: uint64(v)})
	}
	var names []string
	for n := range driverStats {
		if IsLinkErrorStat(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		l.Counters = append(l.Counters, LinkErrorCounter{Name: "ethtool:" + n, Kind: linkErrorStats[n], Value: driverStats[n]})
	}
	return l, nil
}
