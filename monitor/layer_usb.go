package monitor

import (
	"fmt"
	"math"
)

// usbLayer is a USB NIC against its bus. USB 2.0 (480 Mb/s) is half
// duplex: both directions share at most 13 bulk packets of 512 bytes per
// 125 µs microframe, 425.984 Mb/s. SuperSpeed buses are full duplex;
// their ceiling here is the line encoding's (8b/10b at 5 Gb/s, 128b/132b
// above), an upper bound.
type usbLayer struct{ nothing }

// usb2Mbps is what a USB 2.0 bus carries for both directions together.
const usb2Mbps = 425.984

func (usbLayer) offer(j *judgement, v *Verdict) {
	for _, u := range j.traffic.nics {
		l, ok := j.lim[u.name]
		if !ok || l.USBMbps <= 0 {
			continue
		}
		rx, tx := frameBits(u.rxBPS, u.rxPPS)/1e6, frameBits(u.txBPS, u.txPPS)/1e6
		c := Ceiling{Layer: BoundUSB, Subject: u.name, NICs: []string{u.name}}
		switch {
		case l.USBMbps <= 480:
			c.What = fmt.Sprintf("the %s USB 2.0 bus (%s for both directions)", mbps(l.USBMbps), mbps(usb2Mbps))
			c.Share = (rx + tx) / usb2Mbps
		default:
			data := l.USBMbps * 128 / 132
			if l.USBMbps <= 5000 {
				data = l.USBMbps * 0.8
			}
			c.What = fmt.Sprintf("the %s USB bus (%s per direction after line coding)", mbps(l.USBMbps), mbps(data))
			c.Share = math.Max(rx, tx) / data
		}
		if !(c.Share > 0) {
			continue
		}
		c.AchievedMbps = math.Max(rx, tx)
		c.CeilingMbps = c.AchievedMbps / c.Share
		v.Ceilings = append(v.Ceilings, c)
	}
}
