package irq

// Per-CPU counters in /proc/interrupts and /proc/softirqs are 32-bit in the
// kernel (printed as %u) and wrap; softnet_stat's are 32-bit hex. A counter
// also restarts from 0 when an IRQ is freed and requested again.

// wrapZone: a 32-bit counter that was this high and is now lower most likely
// wrapped; one that was lower most likely restarted.
const wrapZone = 3 << 30

// delta32 returns the increase of a kernel counter printed from a 32-bit
// per-CPU value, telling a wrap from a reset.
func delta32(prev, cur uint64) uint64 {
	switch {
	case cur >= prev:
		return cur - prev
	case prev < 1<<32 && prev >= wrapZone && cur < 1<<32:
		return cur + 1<<32 - prev // wrapped
	default:
		return cur // reset: counted from 0 since
	}
}

// delta64 returns the increase of a 64-bit counter; a decrease is a reset
// (interface re-created) and counts from 0.
func delta64(prev, cur uint64) uint64 {
	if cur >= prev {
		return cur - prev
	}
	return cur
}

// deltaU32 is the increase of a uint32 counter modulo 2^32.
func deltaU32(prev, cur uint32) uint32 { return cur - prev }
