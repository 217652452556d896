package nicinfo

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"
)

// LiveEthtool returns the source that asks the running kernel through
// SIOCETHTOOL ioctls: driver info, link settings (ETHTOOL_GLINKSETTINGS with
// the kernel's word-count handshake, so modes of 25G and up are kept; legacy
// GSET when a driver lacks it), channels, the permanent address, ring
// sizes (ETHTOOL_GRINGPARAM), the offload features nicdiag judges
// (ETHTOOL_GFEATURES), the interrupt moderation (ETHTOOL_MSG_COALESCE_GET,
// or ETHTOOL_GCOALESCE) and, with KeepStats, some of the driver's
// statistics (ETHTOOL_GSTATS), the FEC counters (ETHTOOL_MSG_FEC_GET) and
// the module EEPROM pages with diagnostics (ETHTOOL_MSG_MODULE_EEPROM_GET). Sockets are opened on first use, in the
// network namespace of the calling thread, and closed by Close.
func LiveEthtool(opts ...EthtoolOption) EthtoolSource {
	l := &liveEthtool{}
	for _, f := range opts {
		if f != nil {
			f(&l.ethtoolOptions)
		}
	}
	return l
}

type liveEthtool struct {
	ethtoolOptions
	mu  sync.Mutex
	et  *ethtool.Ethtool
	fd  int
	ifr ifreqPtr
	ls  *linkSettings
	nl  ethtoolNL
}

// ifreqPtr is struct ifreq with ifr_data: a name and a pointer, padded to
// the size of the kernel's union (struct ifmap, two longs and 5 bytes): 40
// bytes in all on 64-bit, 32 on 32-bit.
type ifreqPtr struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [unsafe.Sizeof(uintptr(0)) + 8]byte
}

// maxNwords is the most 32-bit words per mask the s8 count can ask for.
const maxNwords = 127

// linkSettings is struct ethtool_link_settings followed by room for the
// three masks (supported, advertising, lp_advertising).
type linkSettings struct {
	cmd                          uint32
	speed                        uint32
	duplex, port, phyad, autoneg uint8
	mdioSupport, mdix, mdixCtrl  uint8
	nwords                       int8
	transceiver, msCfg, msState  uint8
	rateMatching                 uint8
	reserved                     [7]uint32
	masks                        [3 * maxNwords]uint32
}

// Close closes the sockets.
func (l *liveEthtool) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.et != nil {
		l.et.Close()
		l.et = nil
	}
	if l.ls != nil {
		unix.Close(l.fd)
		l.ls = nil
	}
	l.nl.close()
	return nil
}

func (l *liveEthtool) open() error {
	if l.et == nil {
		et, err := ethtool.NewEthtool()
		if err != nil {
			return fmt.Errorf("ethtool socket: %w", err)
		}
		l.et = et
	}
	if l.ls == nil {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("ethtool socket: %w", err)
		}
		l.fd, l.ls = fd, new(linkSettings)
	}
	return nil
}

// DriverInfo asks the kernel for iface's driver info alone
// (ETHTOOL_GDRVINFO); see WithSoftwareBrief.
func (l *liveEthtool) DriverInfo(ctx context.Context, iface string) (*EthtoolAnswers, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !validIfaceName(iface) {
		return nil, wrapErr(fmt.Errorf("%w: interface name %q", ErrMalformed, text.Clip(iface)))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.open(); err != nil {
		return nil, wrapErr(err)
	}
	a, err := l.driverInfo(iface)
	return a, wrapErr(err)
}

// driverInfo asks ETHTOOL_GDRVINFO, with l open and locked. A failed
// request is in the answers' Errors; a gone interface is ErrNoInterface.
func (l *liveEthtool) driverInfo(iface string) (*EthtoolAnswers, error) {
	a := &EthtoolAnswers{Schema: EthtoolSchema}
	di, err := l.et.DriverInfo(iface)
	switch {
	case errors.Is(err, unix.ENODEV):
		return nil, fmt.Errorf("ethtool %s: %w (%w)", iface, ErrNoInterface, err)
	case err != nil:
		a.Errors = map[string]string{"driver": errText(err)}
	default:
		a.Driver, a.Version, a.FirmwareVersion, a.BusInfo = di.Driver, di.Version, di.FwVersion, di.BusInfo
	}
	return a, nil
}

// Answers asks the kernel about iface.
func (l *liveEthtool) Answers(ctx context.Context, iface string) (*EthtoolAnswers, error) {
	a, err := l.answers(ctx, iface)
	return a, wrapErr(err)
}

func (l *liveEthtool) answers(ctx context.Context, iface string) (*EthtoolAnswers, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !validIfaceName(iface) {
		return nil, fmt.Errorf("%w: interface name %q", ErrMalformed, text.Clip(iface))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.open(); err != nil {
		return nil, err
	}
	a, err := l.driverInfo(iface)
	if err != nil {
		return nil, err
	}
	fail := func(key string, err error) {
		if a.Errors == nil {
			a.Errors = map[string]string{}
		}
		a.Errors[key] = errText(err)
	}
	if link, err := l.linkSettings(iface); err != nil {
		fail("link", err)
	} else {
		a.Link = link
	}
	if ch, err := l.et.GetChannels(iface); err != nil {
		fail("channels", err)
	} else {
		a.Channels = &Channels{
			MaxRX: int(ch.MaxRx), MaxTX: int(ch.MaxTx), MaxOther: int(ch.MaxOther), MaxCombined: int(ch.MaxCombined),
			RX: int(ch.RxCount), TX: int(ch.TxCount), Other: int(ch.OtherCount), Combined: int(ch.CombinedCount),
		}
	}
	if pa, err := l.et.PermAddr(iface); err != nil {
		fail("perm_addr", err)
	} else {
		a.PermAddr = pa
	}
	if r, err := l.et.GetRing(iface); err != nil {
		fail("rings", err)
	} else {
		a.Rings = ringsFrom(r)
	}
	if e, err := l.eee(iface); err != nil {
		if !errors.Is(err, unix.EOPNOTSUPP) {
			fail("eee", err)
		}
	} else {
		a.EEE = e
	}
	if p, err := l.pause(iface); err != nil {
		if !errors.Is(err, unix.EOPNOTSUPP) {
			fail("pause", err)
		}
	} else {
		a.Pause = p
	}
	if l.keep != nil {
		l.checkReads(iface, a, fail)
	}
	if f, err := l.features(iface); err != nil {
		fail("features", err)
	} else {
		a.Features = f
	}
	if c, err := l.coalesce(iface); err != nil {
		fail("coalesce", err)
	} else {
		a.Coalesce = c
	}
	return a, nil
}

// ringsFrom converts the kernel's struct ethtool_ringparam.
func ringsFrom(r ethtool.Ring) *Rings {
	return &Rings{
		RX: int(r.RxPending), RXMini: int(r.RxMiniPending), RXJumbo: int(r.RxJumboPending), TX: int(r.TxPending),
		RXMax: int(r.RxMaxPending), RXMiniMax: int(r.RxMiniMaxPending), RXJumboMax: int(r.RxJumboMaxPending), TXMax: int(r.TxMaxPending),
	}
}

// linkSettings does ETHTOOL_GLINKSETTINGS: first with nwords 0, to which the
// kernel answers -N (the words it needs per mask), then with N. Drivers
// without the call get legacy GSET, whose masks hold bits 0-31 only.
func (l *liveEthtool) linkSettings(iface string) (*EthtoolLink, error) {
	ls := l.ls
	*ls = linkSettings{cmd: unix.ETHTOOL_GLINKSETTINGS}
	err := l.ioctl(iface, unsafe.Pointer(ls))
	if errors.Is(err, unix.EOPNOTSUPP) {
		return l.gset(iface)
	}
	if err != nil {
		return nil, err
	}
	n := -int(ls.nwords)
	if n <= 0 || n > maxNwords || ls.cmd != unix.ETHTOOL_GLINKSETTINGS {
		return nil, fmt.Errorf("GLINKSETTINGS handshake returned nwords %d", ls.nwords)
	}
	*ls = linkSettings{cmd: unix.ETHTOOL_GLINKSETTINGS, nwords: int8(n)}
	if err := l.ioctl(iface, unsafe.Pointer(ls)); err != nil {
		return nil, err
	}
	if int(ls.nwords) != n {
		return nil, fmt.Errorf("GLINKSETTINGS returned nwords %d after asking for %d", ls.nwords, n)
	}
	return &EthtoolLink{
		SpeedMbps:  speedFromKernel(ls.speed),
		Duplex:     duplexName(ls.duplex),
		Autoneg:    ls.autoneg == 1,
		Port:       portName(ls.port),
		Supported:  decodeLinkModes(ls.masks[0:n]),
		Advertised: decodeLinkModes(ls.masks[n : 2*n]),
		// The third mask: the partner's modes, as ethtool's "Link partner
		// advertised link modes".
		PartnerAdvertised: decodeLinkModes(ls.masks[2*n : 3*n]),
		Source:            "GLINKSETTINGS",
	}, nil
}

func (l *liveEthtool) gset(iface string) (*EthtoolLink, error) {
	var cmd ethtool.EthtoolCmd
	if _, err := l.et.CmdGet(&cmd, iface); err != nil {
		return nil, err
	}
	return &EthtoolLink{
		SpeedMbps:         speedFromKernel(uint32(cmd.Speed_hi)<<16 | uint32(cmd.Speed)),
		Duplex:            duplexName(cmd.Duplex),
		Autoneg:           cmd.Autoneg == 1,
		Port:              portName(cmd.Port),
		Supported:         decodeLinkModes([]uint32{cmd.Supported}),
		Advertised:        decodeLinkModes([]uint32{cmd.Advertising}),
		PartnerAdvertised: decodeLinkModes([]uint32{cmd.Lp_advertising}),
		Source:            "GSET",
	}, nil
}

func (l *liveEthtool) ioctl(iface string, data unsafe.Pointer) error {
	l.ifr = ifreqPtr{data: data}
	copy(l.ifr.name[:unix.IFNAMSIZ-1], iface)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(l.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&l.ifr)))
	runtime.KeepAlive(data)
	l.ifr.data = nil
	if errno != 0 {
		return errno
	}
	return nil
}

// speedFromKernel maps SPEED_UNKNOWN (0xffffffff), the old 0xffff and 0
// to SpeedUnknown.
func speedFromKernel(s uint32) int {
	if s == 0 || s == 0xffff || s > 1<<31-1 {
		return SpeedUnknown
	}
	return int(s)
}

func duplexName(d uint8) string {
	switch d {
	case 0:
		return "half"
	case 1:
		return "full"
	}
	return "unknown"
}

// portName follows ethtool's PORT_* names.
func portName(p uint8) string {
	switch p {
	case 0x00:
		return "TP"
	case 0x01:
		return "AUI"
	case 0x02:
		return "MII"
	case 0x03:
		return "FIBRE"
	case 0x04:
		return "BNC"
	case 0x05:
		return "DA"
	case 0xef:
		return "None"
	}
	return "Other"
}

// errText is an ioctl error as ethtool words it.
func errText(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// ethtoolEEE is struct ethtool_eee.
type ethtoolEEE struct {
	cmd, supported, advertised, lpAdvertised uint32
	eeeActive, eeeEnabled, txLPIEnabled      uint32
	txLPITimer                               uint32
	reserved                                 [2]uint32
}

// eee does ETHTOOL_GEEE. A driver without EEE (veth, virtio_net) answers
// EOPNOTSUPP, which is no error: the link simply has no EEE.
func (l *liveEthtool) eee(iface string) (*EEE, error) {
	e := ethtoolEEE{cmd: unix.ETHTOOL_GEEE}
	if err := l.ioctl(iface, unsafe.Pointer(&e)); err != nil {
		return nil, err
	}
	return eeeFrom(e), nil
}

func eeeFrom(e ethtoolEEE) *EEE {
	return &EEE{
		Supported:         decodeLinkModes([]uint32{e.supported}),
		Advertised:        decodeLinkModes([]uint32{e.advertised}),
		PartnerAdvertised: decodeLinkModes([]uint32{e.lpAdvertised}),
		Active:            e.eeeActive != 0,
		Enabled:           e.eeeEnabled != 0,
		TXLPIEnabled:      e.txLPIEnabled != 0,
		TXLPITimerUs:      e.txLPITimer,
	}
}

// pause does ETHTOOL_GPAUSEPARAM; EOPNOTSUPP means no flow control.
func (l *liveEthtool) pause(iface string) (*Pause, error) {
	p := ethtool.Pause{Cmd: unix.ETHTOOL_GPAUSEPARAM}
	if err := l.ioctl(iface, unsafe.Pointer(&p)); err != nil {
		return nil, err
	}
	return &Pause{Autoneg: p.Autoneg != 0, RX: p.RxPause != 0, TX: p.TxPause != 0}, nil
}
