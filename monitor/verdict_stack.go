package monitor

import (
	"fmt"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/stack"
)

// causeCode is the finding code of a stack judgement that bound a run.
func causeCode(g *stack.Judgement) finding.Code {
	switch g.Kind {
	case "local_window":
		return finding.RunWindowBound
	case "send_buffer":
		return finding.RunSndbufBound
	case "shaper":
		return finding.RunQdiscBound
	case "qdisc_drops":
		return finding.RunQdiscDrops
	case "conntrack_drops", "conntrack_full":
		return finding.RunConntrackDrops
	case "other_work", "steal":
		return finding.RunOtherWork
	}
	if g.Layer == stack.LayerSocket {
		return finding.RunSocketDrops
	}
	return finding.RunUnknown
}

// causeFinding fills f, the verdict's finding, from the stack's judgement
// that bound the run.
func causeFinding(f *finding.Finding, g *stack.Judgement) {
	f.Code, f.Severity, f.Subject, f.Fix = causeCode(g), finding.Warn, g.Subject, g.Fix
	f.Evidence["layer"] = string(g.Layer)
	f.Evidence["kind"] = g.Kind
	if len(g.Evidence) > 0 {
		f.Evidence["stack"] = strings.Join(g.Evidence, "; ")
	}
	if g.CeilingMbps > 0 {
		f.Evidence["stack_limit"] = fmt.Sprintf("%s of %s", mbps(g.AchievedMbps), mbps(g.CeilingMbps))
	}
}

// stackFindings are the findings of this host's stack beside the
// verdict: each judgement that bound the run inside this host and is not
// the verdict itself (warn), and where the verdict is a core, one queue
// that carried its traffic and a 1500-byte MTU.
func (j *judgement) stackFindings(v *Verdict) []finding.Finding {
	var out []finding.Finding
	if j.stack != nil {
		for _, g := range j.stack.Bound() {
			if v.Cause != nil && g.Layer == v.Cause.Layer && g.Kind == v.Cause.Kind && g.Subject == v.Cause.Subject {
				continue
			}
			if v.Limit != nil && v.Limit.Layer == BoundQdisc && g.Kind == "shaper" && g.Subject == v.Limit.Subject {
				continue
			}
			f := finding.Finding{Code: causeCode(&g), Severity: finding.Warn, Subject: g.Subject,
				Summary: g.Summary, Fix: g.Fix, Evidence: map[string]string{"layer": string(g.Layer), "kind": g.Kind,
					"stack": strings.Join(g.Evidence, "; ")}}
			if !lossKind(g.Kind) && v.Limit != nil && physical(v.Limit.Layer) {
				// A full link or shaper stopped the run before this could.
				f.Severity = finding.Info
				f.Summary += fmt.Sprintf(" (it did not bind this run: %s did)", v.Limit.What)
			}
			out = append(out, f)
		}
	}
	return append(out, j.coreFindings(v)...)
}

// lossKind reports whether a stack judgement's kind is packets lost in
// this host, which count whatever bound the run.
func lossKind(kind string) bool {
	switch kind {
	case "qdisc_drops", "conntrack_drops", "udp_receive_buffer", "udp_send_buffer", "tcp_receive_drops", "listen_overflow":
		return true
	}
	return false
}

// coreFindings says, for a run a core bound, that one queue carried its
// traffic (one flow: more queues do not help) and that its frames were of
// a 1500-byte MTU where the NIC takes more; the verdict's fix follows.
func (j *judgement) coreFindings(v *Verdict) []finding.Finding {
	if v.Bound != BoundCore || v.Limit == nil || v.Limit.CPU == nil {
		return nil
	}
	c := *v.Limit.CPU
	var out []finding.Finding
	var fixes []string
	if q := j.queues.oneQueueOn(c); q != nil {
		out = append(out, oneQueueFinding(q, c, finding.Warn))
		fixes = append(fixes, oneQueueFix(q.nic))
	}
	if f, ok := j.smallMTU(); ok {
		out = append(out, f)
		if len(fixes) == 0 {
			fixes = append(fixes, fixFor(BoundCore))
		}
		fixes = append(fixes, f.Fix)
	}
	if len(fixes) > 0 {
		v.fix = strings.Join(fixes, " ")
		for i := range v.Findings {
			if v.Findings[i].Code == finding.RunCoreBound {
				v.Findings[i].Fix = v.fix
			}
		}
	}
	return out
}

// Thresholds of the MTU finding.
const (
	// mtuFullFrame: a mean frame of at least this many bytes is a bulk
	// transfer at the MTU (1518 at 1500).
	mtuFullFrame = 1000
	// jumboMTU is the MTU suggested.
	jumboMTU = 9000
)

// smallMTU is run.small_mtu: a core-bound run of full-size frames of a
// 1500-byte MTU on a NIC with a device: each packet costs the core about
// the same whatever its size, and a 9000-byte MTU carries six times the
// bytes per packet where the path takes it.
func (j *judgement) smallMTU() (finding.Finding, bool) {
	for _, l := range j.limits {
		u := j.traffic.nic(l.NIC)
		if u == nil || l.MTU <= 0 || l.MTU > 1500 || l.software() {
			continue
		}
		frame, pps := frameBytes(u.rxBPS, u.rxPPS), u.rxPPS
		if u.txBPS > u.rxBPS {
			frame, pps = frameBytes(u.txBPS, u.txPPS), u.txPPS
		}
		if frame < mtuFullFrame || frame > float64(l.MTU)+100 {
			continue // small packets, or GSO super-packets counted whole
		}
		return finding.Finding{Code: finding.RunSmallMTU, Severity: finding.Info, Subject: l.NIC,
			Summary: fmt.Sprintf("%s moved %s frames/s of %.0f bytes at its %d-byte MTU while a core bound the run: the core's cost is per packet, and a %d-byte MTU carries about six times the bytes per packet",
				l.NIC, num(pps), frame, l.MTU, jumboMTU),
			Fix:      fmt.Sprintf("Where the path and the peer take jumbo frames: ip link set dev %s mtu %d, on both ends and every hop between.", l.NIC, jumboMTU),
			Evidence: map[string]string{"mtu": fmt.Sprint(l.MTU), "mean_frame_bytes": fmt.Sprintf("%.0f", frame), "frames_per_s": fmt.Sprintf("%.0f", pps)}}, true
	}
	return finding.Finding{}, false
}
