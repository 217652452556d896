//go:build !linux

package irq

import "fmt"

// netdevQueueStats reads per-queue counters from the kernel's netdev
// generic netlink family on Linux; elsewhere every call fails with an error
// wrapping errNoQstats.
type netdevQueueStats struct{ netns string }

func (s *netdevQueueStats) counters(iface string) (queueCounters, error) {
	return queueCounters{}, fmt.Errorf("%s: %w: not Linux", iface, errNoQstats)
}

func defaultQueueStats(netns string, _ ...*nsConn) queueStatser {
	return ethtoolQueueStats{netns: netns}
}
