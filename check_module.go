package nicdiag

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// moduleCheck: a pluggable module's own diagnostics beyond its own
// thresholds (nic.module_diagnostics): warn beyond an alarm threshold,
// info beyond a warning one. The thresholds are the module maker's, read
// from the module (SFF-8472 A2h, SFF-8636 page 03h, CMIS page 02h); a
// module without them gets no verdict. A weak receive power shows up as
// damaged frames (nic.link_errors); a laser whose bias climbs is wearing
// out. On a port with no carrier (down, or its lower layer down) low
// receive power, transmit power and bias are expected and not judged.
var moduleCheck = Checker{
	Name:  "module diagnostics",
	Codes: []finding.Code{finding.NICModuleDiagnostics},
	Run:   func(h *Host) []finding.Finding { return perNIC(h, moduleDiagnostics) },
}

// PartModule names a port's module EEPROM in Host.Unread:
// nic.module_diagnostics was not judged.
const PartModule Part = "module EEPROM (nic.module_diagnostics)"

// readModuleErrs names in Unread each selected port whose module EEPROM
// could not be read or decoded (nicinfo.NIC.ModuleErr): a port that
// cannot hold a module (twisted pair and the like) or a virtual NIC is
// left out, as the module check would leave it.
func (h *Host) readModuleErrs() {
	for _, n := range h.Selected {
		if n.ModuleErr == nil || !n.Netdev() || !n.Physical() || n.Virtual {
			continue
		}
		switch n.Link.Port {
		case "TP", "AUI", "BNC", "MII":
			continue
		}
		h.unread(PartModule, n.ID(), n.ModuleErr)
	}
}

// moduleFixes are what to do about a value out of range, by what and
// direction. A laser out of range has one fix whichever value says so.
var moduleFixes = map[string]string{
	"rx_power low":     "clean the fibre connectors at both ends, check the run's loss (length, patch panels, bends) and the far end's transmitter",
	"rx_power high":    "too much light for the receiver: an attenuator on a short single-mode run",
	"tx_power low":     laserFix,
	"tx_power high":    laserFix,
	"bias high":        laserFix,
	"bias low":         laserFix,
	"temperature high": "airflow: the fans, a blocked or crowded cage, a hot neighbour; a module rated for the temperature",
	"temperature low":  "the module's rated temperature range",
	"voltage high":     "the host's 3.3 V supply to the cage: another slot, the board's power",
	"voltage low":      "the host's 3.3 V supply to the cage: another slot, the board's power",
}

// laserFix: a laser whose bias or power is out of range is failing (a bias
// that climbs is wear), or the module overheats.
const laserFix = "the laser is failing or the module overheats: replace the module"

// dark reports whether a low reading of what is expected on a port with no
// carrier: a receiver with no light from an uncabled or down peer, a laser
// the driver turned off. Those are not judged there.
func dark(n *NIC, what string) bool {
	switch n.OperState {
	case nicinfo.OperDown, nicinfo.OperLowerLayerDown, "notpresent":
		return what == "rx_power" || what == "tx_power" || what == "bias"
	}
	return false
}

func moduleDiagnostics(n *NIC) (finding.Finding, bool) {
	d := n.Module
	if d == nil || !n.Netdev() {
		return finding.Finding{}, false
	}
	sev := finding.Severity(-1)
	var says []string
	var fixes []string
	ev := map[string]string{"standard": d.Standard, "identifier": fmt.Sprintf("0x%02x", d.Identifier)}
	for _, m := range d.Measures {
		name := m.What
		if m.Lane > 0 {
			name += " lane " + strconv.Itoa(m.Lane)
		}
		ev[strings.ReplaceAll(name, " ", "_")] = measureWords(m.What, m.Value)
		t := m.Thresholds
		if t == nil {
			continue
		}
		var s finding.Severity = -1
		var dir, limit string
		switch {
		case m.Value > t[0]:
			s, dir, limit = finding.Warn, "high", "above its high alarm "+measureWords(m.What, t[0])
		case m.Value < t[1]:
			s, dir, limit = finding.Warn, "low", "below its low alarm "+measureWords(m.What, t[1])
		case m.Value > t[2]:
			s, dir, limit = finding.Info, "high", "above its high warning "+measureWords(m.What, t[2])
		case m.Value < t[3]:
			s, dir, limit = finding.Info, "low", "below its low warning "+measureWords(m.What, t[3])
		}
		if s < 0 {
			continue
		}
		if dir == "low" && dark(n, m.What) {
			ev["carrier"] = fmt.Sprintf("none (operstate %s): low light and bias not judged", n.OperState)
			continue
		}
		sev = max(sev, s)
		says = append(says, fmt.Sprintf("%s %s, %s", strings.ReplaceAll(name, "_", " "), measureWords(m.What, m.Value), limit))
		if f := moduleFixes[m.What+" "+dir]; f != "" && !slices.Contains(fixes, f) {
			fixes = append(fixes, f)
		}
	}
	if sev < 0 {
		return finding.Finding{}, false
	}
	return finding.Finding{
		Code:     finding.NICModuleDiagnostics,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s's module (%s) reports %s: values outside the thresholds its maker set. A receive power out of range shows up as damaged frames (nic.link_errors) or a link that drops.",
			n.Name, d.Standard, joinAnd(says)),
		Fix:      sentence(strings.Join(fixes, "; ")) + fmt.Sprintf(" `ethtool -m %s` shows every value and threshold.", n.Name),
		Evidence: ev,
	}, true
}

// measureWords renders a value in its unit: "69.3 °C", "3.26 V",
// "6.00 mA", "0.501 mW (-3.0 dBm)".
func measureWords(what string, v float64) string {
	switch what {
	case "temperature":
		return strconv.FormatFloat(v, 'f', 1, 64) + " °C"
	case "voltage":
		return strconv.FormatFloat(v, 'f', 2, 64) + " V"
	case "bias":
		return strconv.FormatFloat(v, 'f', 2, 64) + " mA"
	}
	dbm := "-inf dBm"
	if v > 0 {
		dbm = strconv.FormatFloat(10*math.Log10(v), 'f', 1, 64) + " dBm"
	}
	return strconv.FormatFloat(v, 'f', 4, 64) + " mW (" + dbm + ")"
}
