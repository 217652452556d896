package nicdiag

// What Inspect puts in Unread beyond the errors of its reads: what was
// never there to read, and what hides a NIC's device.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// errNoProc is the cause of an Unread for a snapshot without /proc (a
// dump of sysfs alone): what rests on /proc was not checked, and the
// snapshot never claimed to hold it.
var errNoProc = errors.New("the snapshot holds no /proc")

// noteUnjoined puts in Unread what hides a network function's device, so
// that it never reads as a healthy NIC: an interface whose /sys/class/net
// link leads nowhere, or whose device link is missing or leads nowhere
// (it is listed with its bus unknown, and no check of its PCIe path,
// driver or queues runs), a PCI network function that holds a netdev
// which /sys/class/net does not list (it is checked as a function without
// a netdev, its interface's checks skipped), and in a snapshot an
// interface with ethtool answers but no /sys/class/net entry.
func (h *Host) noteUnjoined(o options) {
	root := fsroot.New(o.root).WithDeadline(o.deadline)
	for _, n := range h.NICs {
		if !n.Netdev() {
			h.hiddenNetdevs(root, n)
			continue
		}
		for _, m := range n.Missing {
			field, why, _ := strings.Cut(m, ": ")
			switch {
			case field == "sysfs": // even with the PCI function from ethtool, its attributes are gone
				h.unread(PartNetdev, n.Name, fmt.Errorf("/sys/class/net/%s: %s", n.Name, why))
			case field == "device" && n.Bus == nicinfo.BusOther:
				h.unread(PartNetdev, n.Name, fmt.Errorf("/sys/class/net/%s/device: %s", n.Name, why))
			}
		}
	}
	h.strayAnswers(root)
}

// strayAnswers notes each interface a snapshot holds ethtool answers for
// (ethtool/NAME.json, written for every interface it captured) that
// /sys/class/net does not list.
func (h *Host) strayAnswers(root fsroot.Root) {
	if root.Live() {
		return
	}
	files, _ := root.ReadDir("/ethtool")
	for _, f := range files {
		name, ok := strings.CutSuffix(f, ".json")
		if ok && h.named(name) == nil {
			h.unread(PartNetdev, "", fmt.Errorf("ethtool/%s holds the answers for %s, but /sys/class/net/%s is missing", f, name, name))
		}
	}
}

// hiddenNetdevs notes the netdevs under the PCI function of n (a function
// without a netdev) that /sys/class/net lacks: in its net/, or in the
// net/ of a virtio device below it.
func (h *Host) hiddenNetdevs(root fsroot.Root, n *NIC) {
	if n.PCI == nil {
		return
	}
	dir, err := root.Realpath("/sys/bus/pci/devices/" + string(n.PCI.Address))
	if err != nil {
		return
	}
	dirs := []string{dir}
	if subs, err := root.ReadDir(dir); err == nil {
		for _, s := range subs {
			if strings.HasPrefix(s, "virtio") {
				dirs = append(dirs, dir+"/"+s)
			}
		}
	}
	for _, d := range dirs {
		names, _ := root.ReadDir(d + "/net")
		for _, name := range names {
			h.unread(PartNetdev, n.ID(), fmt.Errorf("%s/net/%s is a network interface, but /sys/class/net/%s is missing", d, name, name))
		}
	}
}
