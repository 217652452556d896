package monitor

import (
	"math"
	"slices"

	"github.com/nicdiag/nicdiag/irq"
)

// trafficLayer is what each NIC moved over the span: frames and bytes per
// direction. Its means are over the span's seconds (span.seconds), which
// every ceiling compares against.
type trafficLayer struct {
	nothingJudged
	nics []*nicUse // in the order first seen
	secs float64   // the divisor of the means, set by Window.judgement
	// soft marks the software NICs (Limits.software), set by
	// Window.judgement.
	soft map[string]bool
}

// nicUse is one NIC over the span: sums of rate × seconds until means.
type nicUse struct {
	name                       string
	rxPPS, txPPS, rxBPS, txBPS float64
}

func (t *trafficLayer) add(x *irq.Sample, dt float64) {
	for _, n := range x.NICs {
		u := t.use(n.Name)
		rxP, txP, rxB, txB := nicRates(n)
		u.rxPPS += rxP * dt
		u.txPPS += txP * dt
		u.rxBPS += rxB * dt
		u.txBPS += txB * dt
	}
}

func (t *trafficLayer) use(name string) *nicUse {
	if u := t.nic(name); u != nil {
		return u
	}
	u := &nicUse{name: name}
	t.nics = append(t.nics, u)
	return u
}

func (t *trafficLayer) merge(o layer) {
	for _, v := range o.(*trafficLayer).nics {
		u := t.use(v.name)
		u.rxPPS += v.rxPPS
		u.txPPS += v.txPPS
		u.rxBPS += v.rxBPS
		u.txBPS += v.txBPS
	}
}

// means divides the sums by secs, once.
func (t *trafficLayer) means(secs float64) {
	t.secs = secs
	if secs <= 0 {
		return
	}
	for _, u := range t.nics {
		u.rxPPS, u.txPPS, u.rxBPS, u.txBPS = u.rxPPS/secs, u.txPPS/secs, u.rxBPS/secs, u.txBPS/secs
	}
}

// offer lists each NIC and direction of the span.
func (t *trafficLayer) offer(j *judgement, v *Verdict) {
	v.Traffic = nil
	for _, u := range j.traffic.nics {
		for _, d := range u.dirs() {
			v.Traffic = append(v.Traffic, Traffic{NIC: u.name, Direction: d.dir, FramesPerS: d.pps,
				AchievedMbps: frameBits(d.bps, d.pps) / 1e6, MeanFrameBytes: frameBytes(d.bps, d.pps)})
		}
	}
}

// direction is one direction of a NIC's means.
type direction struct {
	dir      string // rx or tx
	bps, pps float64
}

func (u *nicUse) dirs() [2]direction {
	return [2]direction{{"rx", u.rxBPS, u.rxPPS}, {"tx", u.txBPS, u.txPPS}}
}

// nic returns the use of the NIC called name, or nil.
func (t *trafficLayer) nic(name string) *nicUse {
	for _, u := range t.nics {
		if u.name == name {
			return u
		}
	}
	return nil
}

// names are the NICs that moved, or every NIC when none did. Software
// NICs count only where no NIC with a device moved traffic worth judging
// (minMbps, minPPS): a bridge, VLAN or veth carries the traffic a NIC
// carries too, or traffic that never reaches a wire.
func (t *trafficLayer) names() []string {
	var devices, all []string
	worth := false
	for _, u := range t.nics {
		if u.rxPPS+u.txPPS <= 0 {
			continue
		}
		all = append(all, u.name)
		if !t.soft[u.name] {
			devices = append(devices, u.name)
			l := load{frameBits(max(u.rxBPS, u.txBPS), max(u.rxPPS, u.txPPS)) / 1e6, u.rxPPS + u.txPPS}
			worth = worth || l.moved()
		}
	}
	switch {
	case worth:
		return devices
	case len(all) > len(devices):
		var soft []string
		for _, n := range all {
			if t.soft[n] {
				soft = append(soft, n)
			}
		}
		return soft
	case len(all) > 0:
		return all
	}
	for _, u := range t.nics {
		all = append(all, u.name)
	}
	return all
}

// dirMbps is what the NICs named moved per direction, in frame Mb/s, and
// in frames/s.
func (t *trafficLayer) dirMbps(names []string) (rx, tx, rxF, txF float64) {
	for _, n := range names {
		if u := t.nic(n); u != nil {
			rx += frameBits(u.rxBPS, u.rxPPS) / 1e6
			tx += frameBits(u.txBPS, u.txPPS) / 1e6
			rxF += u.rxPPS
			txF += u.txPPS
		}
	}
	return rx, tx, rxF, txF
}

// maxDirMbps is the larger direction of the NICs named, in frame Mb/s.
func (t *trafficLayer) maxDirMbps(names []string) float64 {
	rx, tx, _, _ := t.dirMbps(names)
	return math.Max(rx, tx)
}

// fillTrafficCeilings gives each NIC direction the nearest ceiling that
// covers it: what it would move with that ceiling full.
func fillTrafficCeilings(ts []Traffic, cs []Ceiling) {
	for i := range ts {
		t := &ts[i]
		if t.AchievedMbps <= 0 {
			continue
		}
		for _, c := range cs {
			if c.Share <= 0 || !slices.Contains(c.NICs, t.NIC) || (c.Layer == BoundEthernet && c.Direction != t.Direction) {
				continue
			}
			v := t.AchievedMbps / c.Share
			t.CeilingMbps, t.CeilingLayer = &v, c.Layer
			break
		}
	}
}

// frameBits is a NIC counter's traffic in the model's unit, Ethernet frame
// bits (header and FCS): Linux drivers count bytes without the FCS, so 4
// bytes are added per packet.
func frameBits(bytesPerS, pktsPerS float64) float64 { return (bytesPerS + 4*pktsPerS) * 8 }

// FrameMbps is a NIC's byte and packet rates in the verdict's unit,
// Ethernet frame megabits per second (frameBits), for renderers.
func FrameMbps(bytesPerS, pktsPerS float64) float64 { return frameBits(bytesPerS, pktsPerS) / 1e6 }

// frameBytes is the mean frame size in bytes, FCS included, of a count.
func frameBytes(bps, pps float64) float64 {
	if pps <= 0 {
		return 0
	}
	// A few bytes counted over a fraction of a packet make no frame: the
	// mean is held to maxFrameBytes, finite.
	return math.Min(bps/pps+4, maxFrameBytes)
}

// maxFrameBytes bounds a mean frame size: no NIC counts a larger packet
// (a GSO packet counted as one is at most 64 KiB).
const maxFrameBytes = 1 << 20

// maxRate is the largest rate (bytes, packets or counts per second) a
// sample is taken to mean: above it, or negative, NaN or infinite, a rate
// is a broken counter, not traffic, and reads as 0. One such value would
// otherwise turn every mean and ceiling into NaN or Inf.
const maxRate = 1e15

// rate is v as a rate: 0 when it is not one (see maxRate).
func rate(v float64) float64 {
	if v >= 0 && v <= maxRate {
		return v
	}
	return 0
}

// pctOf is v as a percentage of one CPU: in [0, 100], 0 when NaN.
func pctOf(v float64) float64 {
	if v >= 0 {
		return math.Min(v, 100)
	}
	return 0
}

// nicRates are a NIC's rates in a sample, as rates (see rate).
func nicRates(n irq.NICRate) (rxPPS, txPPS, rxBPS, txBPS float64) {
	return rate(n.RXPacketsPerS), rate(n.TXPacketsPerS), rate(n.RXBytesPerS), rate(n.TXBytesPerS)
}
