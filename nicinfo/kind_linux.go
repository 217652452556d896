package nicinfo

import (
	"errors"

	"github.com/vishvananda/netlink"
)

// linkKinds asks netlink for every link's kind ("veth", "bridge", "device"),
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
		kinds[l.Attrs().Name] = l.Type()
	}
	return kinds, nil
}
