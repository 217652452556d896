//go:build !linux

package irq

// defaultPauseStats is nil off Linux: no ethtool netlink.
func defaultPauseStats(string) lossStatser { return nil }
