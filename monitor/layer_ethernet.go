package monitor

import (
	"fmt"
	"math"
)

// ethernetLayer is each port against its line rate, in each direction at
// that direction's mean frame size.
type ethernetLayer struct{ nothing }

func (ethernetLayer) offer(j *judgement, v *Verdict) {
	for _, u := range j.traffic.nics {
		l, ok := j.lim[u.name]
		if !ok || l.PortMbps <= 0 || l.Virtual || l.RealDevice != "" {
			continue
		}
		var best *Ceiling
		for _, d := range u.dirs() {
			f := frameBytes(d.bps, d.pps)
			if f <= 0 {
				continue
			}
			f = math.Max(f, 64)
			line := l.PortMbps * f / (f + 20) // preamble, SFD and gap: 20 bytes a frame
			got := frameBits(d.bps, d.pps) / 1e6
			c := Ceiling{Layer: BoundEthernet, Subject: u.name, NICs: []string{u.name}, Direction: d.dir,
				What:         fmt.Sprintf("%s's %s link (%s at %.0f-byte frames)", u.name, mbps(l.PortMbps), mbps(line), f),
				AchievedMbps: got, CeilingMbps: line, Share: got / line}
			if best == nil || c.Share > best.Share {
				best = &c
			}
		}
		if best != nil {
			v.Ceilings = append(v.Ceilings, *best)
		}
	}
}
