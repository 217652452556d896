package nicinfo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/pcie"
)

// EthtoolSource answers the ethtool questions for one interface. The live
// implementation asks the kernel; the snapshot one reads ethtool/IFACE.json.
// A source that has nothing for an interface returns an error wrapping
// ErrNoAnswers; failures of single requests go in EthtoolAnswers.Errors.
type EthtoolSource interface {
	Answers(ctx context.Context, iface string) (*EthtoolAnswers, error)
}

// driverInfoSource is a source that can answer the driver info alone
// (ETHTOOL_GDRVINFO), for WithSoftwareBrief.
type driverInfoSource interface {
	DriverInfo(ctx context.Context, iface string) (*EthtoolAnswers, error)
}

// driverInfo returns the driver info part of a: driver, version,
// firmware, bus info, and the error of the driver request.
func (a *EthtoolAnswers) driverInfo() *EthtoolAnswers {
	out := &EthtoolAnswers{Schema: a.Schema, Driver: a.Driver, Version: a.Version,
		FirmwareVersion: a.FirmwareVersion, BusInfo: a.BusInfo}
	if e, ok := a.Errors["driver"]; ok {
		out.Errors = map[string]string{"driver": e}
	}
	return out
}

// pciFunction returns the PCI function the driver info's bus info names,
// when it is one written as sysfs writes it ("0000:03:00.0").
func (a *EthtoolAnswers) pciFunction() (pcie.Address, bool) {
	b, err := pcie.ParseAddress(a.BusInfo)
	return b, err == nil && string(b) == strings.ToLower(a.BusInfo)
}

// maxEthtoolJSON bounds one ethtool/IFACE.json.
const maxEthtoolJSON = 1 << 20

// EthtoolFiles returns a source that reads dir/ethtool/IFACE.json, the
// layout of a snapshot rooted at dir.
func EthtoolFiles(dir string) EthtoolSource {
	return fileEthtool{root: fsroot.New(dir)}
}

type fileEthtool struct{ root fsroot.Root }

func (f fileEthtool) Answers(ctx context.Context, iface string) (*EthtoolAnswers, error) {
	a, err := f.answers(ctx, iface)
	return a, wrapErr(err)
}

func (f fileEthtool) answers(ctx context.Context, iface string) (*EthtoolAnswers, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !validIfaceName(iface) {
		return nil, fmt.Errorf("%w: interface name %q", ErrMalformed, text.Clip(iface))
	}
	// Through the root: a symlink out of the snapshot is ErrEscape and a
	// FIFO is refused without blocking, as for every sysfs file.
	b, err := f.root.ReadFileMax("/ethtool/"+iface+".json", maxEthtoolJSON)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("ethtool/%s.json: %w", iface, ErrNoAnswers)
	case errors.Is(err, fsroot.ErrTooLarge):
		return nil, fmt.Errorf("ethtool/%s.json: %w: larger than %d bytes", iface, ErrMalformed, maxEthtoolJSON)
	case err != nil:
		return nil, err
	}
	return parseEthtoolAnswers(b)
}

// parseEthtoolAnswers decodes an ethtool/IFACE.json document. It refuses a
// schema newer than EthtoolSchema and values out of their kernel ranges.
func parseEthtoolAnswers(b []byte) (*EthtoolAnswers, error) {
	var a EthtoolAnswers
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("%w: ethtool answers: %v", ErrMalformed, err)
	}
	if a.Schema < 1 || a.Schema > EthtoolSchema {
		return nil, fmt.Errorf("%w: ethtool answers schema %d (this nicdiag reads %d)", ErrMalformed, a.Schema, EthtoolSchema)
	}
	if l := a.Link; l != nil {
		switch s := int64(l.SpeedMbps); {
		case s == 0 || s == 0xffff || s == 0xffffffff:
			// The kernel's raw "unknown" spellings, as speedFromKernel
			// and parseNetSpeed read them.
			l.SpeedMbps = SpeedUnknown
		case s < SpeedUnknown || s > 1<<31-1:
			return nil, fmt.Errorf("%w: ethtool speed %d", ErrMalformed, l.SpeedMbps)
		}
	}
	if err := a.Rings.check(); err != nil {
		return nil, err
	}
	if err := a.cleanLossStats(); err != nil {
		return nil, err
	}
	if err := checkModulePages(a.Module); err != nil {
		return nil, err
	}
	a.clean()
	return &a, nil
}

// clean drops the control characters a hand-made ethtool/IFACE.json could
// hold from the strings that end up in output.
func (a *EthtoolAnswers) clean() {
	for _, s := range []*string{&a.Driver, &a.Version, &a.FirmwareVersion, &a.BusInfo, &a.PermAddr} {
		*s = text.Clean(*s)
	}
	if l := a.Link; l != nil {
		l.Duplex, l.Port, l.Source = text.Clean(l.Duplex), text.Clean(l.Port), text.Clean(l.Source)
		for _, modes := range [][]string{l.Supported, l.Advertised, l.PartnerAdvertised} {
			for i := range modes {
				modes[i] = text.Clean(modes[i])
			}
		}
	}
	if e := a.EEE; e != nil {
		for _, modes := range [][]string{e.Supported, e.Advertised, e.PartnerAdvertised} {
			for i := range modes {
				modes[i] = text.Clean(modes[i])
			}
		}
	}
	if len(a.Features) > 0 {
		// Only the judged names are kept, as the live reader keeps them.
		fs := make(map[string]Feature, len(a.Features))
		for k, v := range a.Features {
			if slices.Contains(JudgedFeatures, k) {
				fs[k] = v
			}
		}
		a.Features = fs
	}
	if c := a.Coalesce; c != nil {
		c.Source = text.Clean(c.Source)
	}
	if len(a.Errors) > 0 {
		errs := make(map[string]string, len(a.Errors))
		for k, v := range a.Errors {
			errs[text.Clean(k)] = text.Clean(v)
		}
		a.Errors = errs
	}
}

// validIfaceName is what nicdiag reads as a netdev name: what the kernel
// accepts (1 to 15 bytes; no '/', ':', NUL or space; not "." or "..") less
// the names a terminal would not show as they are (control and
// bidirectional characters, bytes that are not UTF-8; see text.Clean). The
// kernel takes "eth\x1b[2J"; nicdiag skips it, in the interface list and
// wherever a name is read from the tree (bond slaves, lower and master
// links), rather than print it.
func validIfaceName(s string) bool {
	return s != "" && len(s) < 16 && s != "." && s != ".." &&
		!strings.ContainsAny(s, "/\x00 \t\n:") && text.Clean(s) == s
}
