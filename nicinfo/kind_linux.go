package nicinfo

import (
	"errors"
	"net"

	"github.com/vishvananda/netlink"
)

// linkKinds asks netlink for every link's kind ("veth", "bridge", "device";
// "loopback" for lo, which netlink also calls "device"),
// the one fact sysfs does not hold. An interrupted dump is retried, and its
// data used if it keeps being interrupted.
func linkKinds() (map[string]string, error) {
	var links []netlink.Link
	var err error
	for try := 0; try < 3; try++ {
		links, err = netlink.LinkList()
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return nil, err
	}
	kinds := make(map[string]string, len(links))
	for _, l := range links {
		k := l.Type()
		if k == "device" && l.Attrs().Flags&net.FlagLoopback != 0 {
			k = "loopback" // netlink's "device" is any link without a kind
		}
		kinds[l.Attrs().Name] = k
	}
	return kinds, nil
}
