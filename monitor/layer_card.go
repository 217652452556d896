package monitor

import (
	"fmt"
	"strings"
)

// cardLayer is what a misidentified card (a router on a PCIe card, say)
// is known to move: a ceiling outside the host (LayerCard), never a
// verdict of its own.
type cardLayer struct{ nothing }

func (cardLayer) offer(j *judgement, v *Verdict) {
	seen := map[string]bool{}
	for _, l := range j.limits {
		if l.RealDevice == "" || l.MovesMbps <= 0 || seen[l.RealDevice] {
			continue
		}
		var names []string
		for _, m := range j.limits {
			if m.RealDevice == l.RealDevice && j.traffic.nic(m.NIC) != nil {
				names = append(names, m.NIC)
			}
		}
		if len(names) == 0 {
			continue
		}
		seen[l.RealDevice] = true
		got := j.traffic.maxDirMbps(names)
		v.Ceilings = append(v.Ceilings, Ceiling{Layer: LayerCard, Subject: subjectOf(names), NICs: names,
			What:         fmt.Sprintf("what %s is known to move (%s)", strings.TrimSuffix(l.RealDevice, " emulating it"), mbps(l.MovesMbps)),
			AchievedMbps: got, CeilingMbps: l.MovesMbps, Share: got / l.MovesMbps})
	}
}

// outsideWhat says what outside the host is the likely limit.
func outsideWhat(j *judgement) string {
	for _, l := range j.limits {
		if l.RealDevice != "" && j.traffic.nic(l.NIC) != nil {
			what := fmt.Sprintf("%s is probably %s, not the chip its PCI ID names", l.NIC, strings.TrimSuffix(l.RealDevice, " emulating it"))
			if l.BoundBy != "" {
				what += ", and is bound by " + l.BoundBy
			}
			if l.MovesMbps > 0 {
				moved := j.traffic.maxDirMbps(j.traffic.names())
				what += fmt.Sprintf(" (the card is known to move %s; this run moved %s of it)", mbps(l.MovesMbps), pct(moved/l.MovesMbps))
			}
			return what
		}
	}
	return "the peer, the network between, or the load generator's own settings (a rate limit, a window, too few streams)"
}
