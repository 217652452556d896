package nicdiag

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// workaround is a setting people make on purpose to get round a known
// fault: the driver it applies to, the offload whose being off marks it,
// the offloads it turns off (nic.offload_off leaves them alone), what it
// is, what it costs, and where it is described.
type workaround struct {
	driver  string
	marker  string
	covers  []string
	name    string
	cost    string
	sources string
}

// workarounds are the settings nicdiag recognises.
var workarounds = []workaround{{
	driver: "e1000e",
	marker: nicinfo.FeatureTSO,
	covers: []string{nicinfo.FeatureTSO, nicinfo.FeatureTSO6, nicinfo.FeatureGSO, nicinfo.FeatureGRO},
	name:   "the e1000e \"Detected Hardware Unit Hang\" workaround (TSO, and often GSO and GRO, off)",
	cost: "the CPU segments every TCP send itself and, with GRO off, the receive stack runs once per frame: " +
		"about 81 kpps of 1518-byte frames each way at 1 Gb/s, which one core handles",
	sources: "Intel's e1000e parts (82574, 82579, I217-I219) hang their transmit unit under TSO on some boards; " +
		"turning the offloads off is the usual remedy (e.g. gislab-npo/gislab#407, siutsin/otaru#2637)",
}}

// workaroundOf returns the workaround n's settings match, if any: its
// driver and its marker offload off (and changeable).
func workaroundOf(n *NIC) (workaround, bool) {
	for _, w := range workarounds {
		if f, ok := n.Features[w.marker]; ok && n.Driver == w.driver && !f.Active && !f.Fixed {
			return w, true
		}
	}
	return workaround{}, false
}

// workaroundCheck: a known workaround recognised as such
// (nic.known_workaround, info): named, its cost stated, and not undone
// (nic.offload_off leaves the offloads it covers alone).
var workaroundCheck = Checker{
	Name:  "workarounds",
	Codes: []finding.Code{finding.NICKnownWorkaround},
	Run: func(h *Host) []finding.Finding {
		var out []finding.Finding
		for _, n := range h.Selected {
			if !offloadJudged(n) {
				continue
			}
			w, ok := workaroundOf(n)
			if !ok {
				continue
			}
			ev := map[string]string{"driver": n.Driver}
			var off []string
			for _, name := range w.covers {
				if f, ok := n.Features[name]; ok {
					ev[name] = featureState(f)
					if !f.Active {
						off = append(off, name)
					}
				}
			}
			out = append(out, finding.Finding{
				Code:     finding.NICKnownWorkaround,
				Severity: finding.Info,
				Subject:  n.Name,
				Summary: fmt.Sprintf("%s (%s) has %s off: %s. It costs this: %s. nicdiag does not suggest turning them back on.",
					n.Name, n.Driver, strings.Join(off, ", "), w.name, w.cost),
				Fix: fmt.Sprintf("Keep it while the hang can come back (%s). To test without it: `ethtool -K %s tso on gso on gro on`, then watch `journalctl -k | grep -i 'unit hang'` under load.",
					w.sources, n.Name),
				Evidence: ev,
			})
		}
		return out
	},
}

// coveredByWorkaround reports whether offload feature name is off because
// of a workaround n carries.
func coveredByWorkaround(n *NIC, name string) bool {
	w, ok := workaroundOf(n)
	return ok && slices.Contains(w.covers, name)
}
