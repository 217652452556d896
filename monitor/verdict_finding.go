package monitor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// codes and severities of the verdicts.
var verdictCodes = map[Bound]struct {
	code finding.Code
	sev  finding.Severity
}{
	BoundEthernet: {finding.RunEthernetBound, finding.Info},
	BoundPCIe:     {finding.RunPCIeBound, finding.Warn},
	BoundTunnel:   {finding.RunTunnelBound, finding.Warn},
	BoundUSB:      {finding.RunUSBBound, finding.Warn},
	BoundCore:     {finding.RunCoreBound, finding.Warn},
	BoundCommand:  {finding.RunCommandBound, finding.Warn},
	BoundNICDrops: {finding.RunNICDrops, finding.Warn},
	BoundPause:    {finding.RunPause, finding.Warn},
	BoundQdisc:    {finding.RunQdiscBound, finding.Warn},
	BoundOutside:  {finding.RunOutsideHost, finding.Info},
	BoundUnknown:  {finding.RunUnknown, finding.Info},
}

// verdictFinding is the verdict as a Finding.
func (v *Verdict) verdictFinding() finding.Finding {
	vc := verdictCodes[v.Bound]
	f := finding.Finding{Code: vc.code, Severity: vc.sev, Summary: v.Summary, Evidence: map[string]string{
		"bound":          string(v.Bound),
		"active_samples": fmt.Sprintf("%d of %d (%.1f s)", v.ActiveSamples, v.Samples, v.ActiveSeconds),
		"achieved_mbps":  fmt.Sprintf("%.1f", v.AchievedMbps),
		"peak_mbps":      fmt.Sprintf("%.1f", v.PeakMbps),
	}}
	f.DemandMbps = finding.Mbps(v.AchievedMbps)
	if v.CeilingMbps != nil {
		f.CapacityMbps = finding.Mbps(*v.CeilingMbps)
	}
	if w := watchedText(v.Watched); w != "" {
		f.Evidence["interfaces"] = w
	}
	switch {
	case v.Cause != nil:
		causeFinding(&f, v.Cause)
	case v.Limit != nil:
		f.Subject = v.Limit.Subject
		f.Direction = v.Limit.Direction
		f.Evidence["limit"] = fmt.Sprintf("%s: %s of %s", v.Limit.What, mbps(v.Limit.AchievedMbps), mbps(v.Limit.CeilingMbps))
		f.Fix = fixFor(v.Limit.Layer)
		if v.Limit.Layer == BoundQdisc {
			f.Fix = v.shaperFix()
		}
	default:
		f.Subject = subjectOf(v.nicsMoved())
		f.Fix = v.unboundFix()
	}
	if v.Next != nil {
		f.Evidence["next"] = fmt.Sprintf("%s at %s", v.Next.What, pct(v.Next.Share))
	}
	if b := v.BusiestCPU; b != nil {
		f.Evidence["busiest_cpu"] = fmt.Sprintf("CPU %d %.0f %% busy (%.0f %% irq+softirq, %.0f %% user, %.0f %% system, %.0f %% steal)",
			b.CPU, b.BusyPct, b.PacketPct, b.UserPct, b.SystemPct, b.StealPct)
	}
	return f
}

func (v *Verdict) nicsMoved() []string {
	var out []string
	for _, t := range v.Traffic {
		if t.FramesPerS > 0 && !slices.Contains(out, t.NIC) {
			out = append(out, t.NIC)
		}
	}
	return out
}

// fixFor is what to do about a run bound by a ceiling of layer b.
func fixFor(b Bound) string {
	switch b {
	case BoundEthernet:
		return "The link is full: a faster link, or more ports (a bond, ECMP), moves more."
	case BoundPCIe:
		return "Move the card to a slot whose link matches the card (speed and width: `nicdiag explain` shows the ceiling per slot), or use fewer ports at once."
	case BoundTunnel:
		return "The tunnel carries no more: a NIC in a PCIe slot, or a tunnel of a later generation."
	case BoundUSB:
		return "Use a USB port of a faster bus (SuperSpeed), or a PCIe NIC."
	case BoundCore:
		return "Spread the packet work: more queues (ethtool -L), IRQ affinity on more cores, RPS/RFS, or a NIC with RSS."
	case BoundCommand:
		return "The benchmark measured its own thread: run more streams in more processes (iperf3 -P before 3.16 is one thread; start several iperf3 with different ports), or pin it away from the NIC's IRQ cores."
	}
	return ""
}

// unboundFix is what to do about a run that reached no ceiling.
func (v *Verdict) unboundFix() string {
	switch v.Bound {
	case BoundNICDrops:
		if l := v.lossOf(irq.LossNIC); l != nil {
			return dropFix(l.NIC)
		}
	case BoundPause:
		if l := v.pauseLoss(); l != nil {
			return pauseFix(l)
		}
	case BoundOutside:
		if l := v.lossOf(irq.LossAllowance); l != nil {
			return allowanceFix(l.NIC)
		}
		return "Look past this host: run the load generator with more streams or no rate limit (iperf3 -P 4 -b 0), test the peer against another host, and check the path between (its slowest link, a shaper, the peer's CPUs)."
	case BoundUnknown:
		if len(v.unread) > 0 {
			return "Run nicdiag monitor as root on the live host, with the load generator as its command (nicdiag monitor -- CMD), so that this host's stack is read: " + strings.Join(v.unread, "; ") + "."
		}
		return "Name the interface that carries the traffic (nicdiag monitor IFACE -- CMD), and run nicdiag check to see what could not be read."
	}
	return ""
}

// shaperFix is the stack's fix for the shaper that bound the run.
func (v *Verdict) shaperFix() string {
	if v.Stack != nil && v.Limit != nil {
		for _, g := range v.Stack.Judgements {
			if g.Kind == "shaper" && g.Subject == v.Limit.Subject {
				return g.Fix
			}
		}
	}
	return "A qdisc shapes the traffic to this rate: tc -s qdisc show, and lift or raise the shaping if it is not meant."
}
