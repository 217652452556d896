package nicinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/pcie"
)

// reader fills one NIC from sysfs and collects what it could not read.
type reader struct {
	root fsroot.Root
	nic  *NIC
}

func (r *reader) missing(field string, err error) {
	r.nic.Missing = append(r.nic.Missing, field+": "+reason(err))
}

// readText reads an attribute that ends up in output (a MAC, an operstate,
// a uevent) without the control characters a hand-made snapshot could put
// in it.
func (r *reader) readText(p string) (string, error) {
	s, err := r.root.ReadString(p)
	return text.Clean(s), err
}

// readLinkBase is LinkBase for a name that ends up in output (a driver).
func (r *reader) readLinkBase(p string) (string, error) {
	s, err := r.root.LinkBase(p)
	return text.Clean(s), err
}

// reason words an error without the root's directory, so that a snapshot and
// the host it came from say the same thing.
func reason(err error) string {
	err = unwrapPkg(err)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "absent"
	case errors.Is(err, fsroot.ErrEscape): // before ErrPermission, which it matches
		return "symlink leaves the root"
	case errors.Is(err, fsroot.ErrNotRegular):
		return fsroot.ErrNotRegular.Error()
	case errors.Is(err, fs.ErrPermission):
		return "permission denied (needs root)"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// readNetdev reads /sys/class/net/NAME and finds the device behind it. It
// returns the kernel path of the netdev's device ("" for virtual ones).
func (r *reader) readNetdev(name string) (devPath string) {
	n := r.nic
	dir, err := r.root.Realpath("/sys/class/net/" + name)
	if err != nil {
		r.missing("sysfs", err)
		n.Bus = BusOther
		return ""
	}
	if v, err := r.root.ReadInt(dir + "/ifindex"); err != nil {
		r.missing("index", err)
	} else {
		n.Index = int(v)
	}
	if s, err := r.readText(dir + "/address"); err != nil {
		r.missing("mac", err)
	} else {
		n.MAC = s
	}
	if v, err := r.root.ReadInt(dir + "/mtu"); err != nil {
		r.missing("mtu", err)
	} else {
		n.MTU = int(v)
	}
	if s, err := r.readText(dir + "/operstate"); err != nil {
		r.missing("operstate", err)
	} else {
		n.OperState = OperState(s)
	}
	r.readQueues(dir + "/queues")
	r.readSysfsLink(dir)
	r.readBridge(dir)
	r.readBond(dir)
	r.readLower(dir)
	r.readCarrier(dir)
	// Split before cleaning: text.Clean drops the newlines between the
	// uevent's lines.
	if ue, err := r.root.ReadString(dir + "/uevent"); err == nil {
		for _, l := range strings.Split(ue, "\n") {
			if v, ok := strings.CutPrefix(l, "DEVTYPE="); ok {
				n.Kind = text.Clean(strings.TrimSpace(v))
			}
		}
	}

	dev, err := r.root.Realpath(dir + "/device")
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := r.root.Readlink(dir + "/device"); lerr != nil && strings.HasPrefix(dir, "/sys/devices/virtual/") {
			n.Bus = BusVirtual // no device link at all: a software interface
			return ""
		}
		// The link is missing while the netdev sits under a device (the
		// kernel links every such netdev to its parent), or it is there
		// and leads nowhere (a snapshot that lacks the device's
		// directory): the join failed; the NIC is not virtual.
	}
	if err != nil {
		r.missing("device", err)
		n.Bus = BusOther
		return ""
	}
	return dev
}

// readQueues counts queues/rx-N and tx-N and looks for RPS masks.
func (r *reader) readQueues(dir string) {
	names, err := r.root.ReadDir(dir)
	if err != nil {
		r.missing("queues", err)
		return
	}
	q := &r.nic.Queues
	q.RX, q.TX = parseQueueDirs(names)
	for _, e := range names {
		if !strings.HasPrefix(e, "rx-") {
			continue
		}
		s, err := r.root.ReadString(dir + "/" + e + "/rps_cpus")
		if err != nil {
			continue // absent without CONFIG_RPS; not worth a Missing per queue
		}
		if set, _ := parseCPUMask(s); set {
			q.RPS = true
			break
		}
	}
}

// readSysfsLink reads speed and duplex from sysfs; ethtool's answers, when
// there are any, take their place later. Reading them fails with EINVAL
// when the link is down or the driver has no link settings, which is not
// worth a Missing entry: the value is simply unknown.
func (r *reader) readSysfsLink(dir string) {
	l := &r.nic.Link
	l.SpeedMbps = SpeedUnknown
	if s, err := r.root.ReadString(dir + "/speed"); err == nil {
		if v, err := parseNetSpeed(s); err != nil {
			r.missing("link.speed", err)
		} else {
			l.SpeedMbps = v
		}
	}
	if s, err := r.root.ReadString(dir + "/duplex"); err == nil {
		if v, err := parseDuplex(s); err != nil {
			r.missing("link.duplex", err)
		} else {
			l.Duplex = Duplex(v)
		}
	}
}

// join walks from the netdev's device up to the first PCI function or USB
// device: virtio's device is virtioN under the PCI function, a USB NIC's is
// an interface (2-1:1.0) under the device (2-1). It returns the PCI address
// and the kernel path of the PCI function, if any.
func (r *reader) join(dev string) (bdf pcie.Address, pciDir string) {
	n := r.nic
	if drv, err := r.readLinkBase(dev + "/driver"); err == nil {
		n.Driver = drv // the netdev's driver; ethtool's answer replaces it
	}
	r.readVirtio(dev)
	for p := dev; p != "/sys/devices" && p != "/" && p != "."; p = path.Dir(p) {
		base := path.Base(p)
		if a := pcie.Address(base); a.Valid() {
			n.Bus = BusPCI
			return a, p
		}
		if isUSBDevice(base) && r.root.Exists(p+"/idVendor") {
			n.Bus = BusUSB
			r.readUSB(p, dev)
			return "", ""
		}
	}
	n.Bus = BusOther
	return "", ""
}

// isUSBDevice matches a USB device name: "2-1", "1-1.4.2" (not "usb2", not
// an interface "2-1:1.0").
func isUSBDevice(s string) bool {
	bus, port, ok := strings.Cut(s, "-")
	if !ok || !isDec(bus) || port == "" || strings.Contains(port, ":") {
		return false
	}
	for _, e := range strings.Split(port, ".") {
		if !isDec(e) {
			return false
		}
	}
	return true
}

func (r *reader) readUSB(p, iface string) {
	u := &USBDevice{Path: path.Base(p)}
	if v, err := r.root.ReadHex(p+"/idVendor", 4); err != nil {
		r.missing("usb.vendor_id", err)
	} else {
		u.VendorID = uint16(v)
	}
	if v, err := r.root.ReadHex(p+"/idProduct", 4); err != nil {
		r.missing("usb.product_id", err)
	} else {
		u.ProductID = uint16(v)
	}
	if v, err := r.root.ReadString(p + "/speed"); err != nil {
		r.missing("usb.speed", err)
	} else if v == "1.5" {
		u.SpeedMbps = 1 // low speed, 1.5 Mb/s
	} else if f, err := parseNetSpeed(v); err == nil && f > 0 {
		u.SpeedMbps = f
	} else {
		r.missing("usb.speed", fmt.Errorf("%w: USB speed %q", ErrMalformed, text.Clip(v)))
	}
	if drv, err := r.readLinkBase(iface + "/driver"); err == nil {
		u.Driver = drv
	}
	r.nic.USB = u
}
