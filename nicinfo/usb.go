package nicinfo

import (
	"fmt"
	"math"
	"strconv"

	"github.com/nicdiag/nicdiag/finding"
)

// The USB bus verdict (nic.usb_bus): a USB network adapter is bound by the
// bus it enumerated on as much as by its Ethernet speed.

// usbBus describes a USB bus speed: its name and the most a bulk endpoint
// can move over it in Mb/s (high speed: 13 packets of 512 B per 125 µs
// microframe, shared by both directions; SuperSpeed: the line rate after
// 8b/10b or 128b/132b encoding, each direction).
func usbBus(mbps int) (name string, capacity float64, shared bool) {
	switch {
	case mbps <= 0:
		return "", 0, false
	case mbps <= 12:
		return "USB 1.1 (12 Mb/s)", 19 * 64 * 8 * 1000 / 1e6, true
	case mbps <= 480:
		return "USB 2.0 (480 Mb/s)", 13 * 512 * 8 * 8000 / 1e6, true
	case mbps <= 5000:
		return "USB 3.2 Gen 1 (5 Gb/s)", 5000 * 8 / 10.0, false
	case mbps <= 10000:
		return "USB 3.2 Gen 2 (10 Gb/s)", 10000 * 128 / 132.0, false
	}
	return fmt.Sprintf("USB 3.2 Gen 2x2 (%d Mb/s)", mbps), float64(mbps) * 128 / 132.0, false
}

// usbFinding reports the USB bus ceiling of a USB network adapter: warn when
// the bus carries less than the adapter's Ethernet speed, else info.
func usbFinding(n NIC) finding.Finding {
	f := finding.Finding{Code: finding.NICUSBBus, Severity: finding.Info, Subject: n.Name,
		Evidence: map[string]string{}}
	need, needFrom := usbNeed(n, f.Evidence)
	if need > 0 {
		f.Evidence["ethernet_mbps"] = strconv.Itoa(need)
		f.DemandMbps = finding.Mbps(float64(need))
	}
	var bus int
	if n.USB != nil {
		bus = n.USB.SpeedMbps
		f.Evidence["usb_path"] = n.USB.Path
		f.Evidence["usb_id"] = fmt.Sprintf("%04x:%04x", n.USB.VendorID, n.USB.ProductID)
	}
	name, capacity, shared := usbBus(bus)
	if name == "" {
		f.Summary = fmt.Sprintf("%s is a USB network adapter; its USB bus speed is unknown", n.Name)
		return f
	}
	f.Evidence["usb_speed_mbps"] = strconv.Itoa(bus)
	f.Evidence["usb_bulk_mbps"] = strconv.FormatFloat(capacity, 'f', 0, 64)
	f.CapacityMbps = finding.Mbps(math.Round(capacity))
	dir := "each way"
	if shared {
		dir = "for both directions together"
	}
	switch {
	case need > 0 && capacity < float64(need):
		f.Severity = finding.Warn
		f.Summary = fmt.Sprintf("%s is on %s, which moves at most about %.0f Mb/s %s, below the %d Mb/s of %s",
			n.Name, name, capacity, dir, need, needFrom)
		f.Fix = "Plug the adapter into a faster USB port (USB 3 ports are often blue or marked SS), " +
			"without a USB 2 hub or cable in between."
	case need > 0:
		f.Summary = fmt.Sprintf("%s is on %s, which moves up to about %.0f Mb/s %s: enough for the %d Mb/s of %s, "+
			"though USB adds per-packet latency and CPU cost", n.Name, name, capacity, dir, need, needFrom)
	default:
		f.Summary = fmt.Sprintf("%s is on %s, which moves up to about %.0f Mb/s %s", n.Name, name, capacity, dir)
	}
	return f
}

// usbNeed is the Ethernet speed the adapter can use and what says so: the
// chip's, else its fastest supported mode, else the link's speed; 0 when
// none is known. The chip's facts go into ev.
func usbNeed(n NIC, ev map[string]string) (int, string) {
	need, needFrom := 0, ""
	if row, ok := ChipOf(n); ok && row.MaxMbps > 0 {
		need, needFrom = row.MaxMbps, row.Chip
		ev["chip"] = row.Chip
		ev["chip_max_mbps"] = strconv.Itoa(row.MaxMbps)
	}
	if mode, top := maxMode(n.Link.Supported); need == 0 && top > 0 {
		need, needFrom = top, mode
	}
	if need == 0 && n.Link.SpeedMbps > 0 {
		need, needFrom = n.Link.SpeedMbps, "the link"
	}
	return need, needFrom
}
