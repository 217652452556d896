//go:build !linux

package irq

import (
	"fmt"

	"github.com/vishvananda/netns"
)

// NetdevQueueStats reads per-queue counters from the kernel's netdev
// generic netlink family on Linux; elsewhere every call fails with an error
// wrapping errNoQstats.
func NetdevQueueStats(ns netns.NsHandle) QueueStatser {
	return QueueStatsFunc(func(iface string) (QueueCounters, error) {
		return QueueCounters{}, fmt.Errorf("%s: %w: not Linux", iface, errNoQstats)
	})
}

func defaultQueueStats() QueueStatser { return EthtoolQueueStats(nil) }
