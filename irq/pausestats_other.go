//go:build !linux

package irq

// defaultPauseStats is nil off Linux: no ethtool netlink.
func defaultPauseStats(string, ...*nsConn) lossStatser { return nil }
