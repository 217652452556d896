package monitor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// lossLayer is the NICs' loss counters over the whole run, not only its
// span: a drop before or after the load still counts. It is judged apart
// from the span's layers (Window.run).
type lossLayer struct {
	nics []*nicLosses // in the order first seen
}

// nicLosses is one NIC's received packets and loss counts over the run.
type nicLosses struct {
	name      string
	rxPackets float64
	counts    []lossCount
}

type lossCount struct {
	name  string
	class irq.LossClass
	count float64
	secs  float64 // seconds it was counted in
}

func (l *lossLayer) add(x *irq.Sample, dt float64) {
	for _, n := range x.NICs {
		i := slices.IndexFunc(l.nics, func(u *nicLosses) bool { return u.name == n.Name })
		if i < 0 {
			i = len(l.nics)
			l.nics = append(l.nics, &nicLosses{name: n.Name})
		}
		u := l.nics[i]
		u.rxPackets += rate(n.RXPacketsPerS) * dt
		for _, r := range n.Losses {
			j := slices.IndexFunc(u.counts, func(c lossCount) bool { return c.name == r.Name })
			if j < 0 {
				u.counts = append(u.counts, lossCount{name: r.Name, class: r.Class})
				j = len(u.counts) - 1
			}
			u.counts[j].count += rate(r.PerS) * dt
			u.counts[j].secs += dt
		}
	}
}

// merge is not needed: the layer sees every sample once.
func (l *lossLayer) merge(layer) {}

// lossClasses are the classes summed, in the order Verdict.Losses lists
// them per NIC.
var lossClasses = []irq.LossClass{irq.LossNIC, irq.LossTX, irq.LossPauseRX, irq.LossPauseTX, irq.LossAllowance, irq.LossDropped}

// offer sums each NIC's loss counters by class; a class whose counters
// did not move is left out. Sources count the same loss more than once
// (sysfs and the driver's own counter; a driver's no-buffer and missed
// counters): the largest stands for the class. Pause frames are the
// exception within one source: xon and xoff, or several priorities, are
// different frames and add up.
func (l *lossLayer) offer(_ *judgement, v *Verdict) {
	v.Losses = nil
	for _, u := range l.nics {
		for _, class := range lossClasses {
			if loss, ok := u.loss(class); ok {
				v.Losses = append(v.Losses, loss)
			}
		}
	}
}

func (u *nicLosses) loss(class irq.LossClass) (Loss, bool) {
	out := Loss{NIC: u.name, Class: class}
	var secs float64
	pause := class == irq.LossPauseRX || class == irq.LossPauseTX
	bySource := map[string]float64{}
	for _, c := range u.counts {
		if c.class != class || c.count < 0.5 {
			continue
		}
		out.Counters = append(out.Counters, c.name)
		n := c.count
		if pause {
			src, _, _ := strings.Cut(c.name, ":")
			bySource[src] += c.count
			n = bySource[src]
		}
		if n > out.Count {
			out.Count, secs = n, c.secs
		}
	}
	if len(out.Counters) == 0 {
		return out, false
	}
	if secs > 0 {
		out.PerS = out.Count / secs
	}
	if class == irq.LossNIC {
		s := out.Count / (u.rxPackets + out.Count)
		out.OfferedShare = &s
	}
	return out, true
}

// lossOf returns the worst loss of a class that counts, or nil: NIC drops
// must be dropShare of the offered packets and dropPerS; allowance any.
func (v *Verdict) lossOf(class irq.LossClass) *Loss {
	var best *Loss
	for i := range v.Losses {
		l := &v.Losses[i]
		if l.Class != class {
			continue
		}
		if class == irq.LossNIC && (l.OfferedShare == nil || *l.OfferedShare < dropShare || l.PerS < dropPerS) {
			continue
		}
		if best == nil || l.Count > best.Count {
			best = l
		}
	}
	return best
}

// pauseLoss returns the busier pause class at pausePerS or more, or nil.
func (v *Verdict) pauseLoss() *Loss {
	var best *Loss
	for i := range v.Losses {
		l := &v.Losses[i]
		if (l.Class == irq.LossPauseRX || l.Class == irq.LossPauseTX) && l.PerS >= pausePerS && (best == nil || l.PerS > best.PerS) {
			best = l
		}
	}
	return best
}

// findings reports the losses beside the verdict: NIC drops and pause
// frames that count but were not the verdict, and any allowance excess
// (also when it is what made the run outside_host: that verdict is info,
// the excess a warning).
func (l *lossLayer) findings(_ *judgement, v *Verdict) []finding.Finding {
	var out []finding.Finding
	if d := v.lossOf(irq.LossNIC); d != nil && v.Bound != BoundNICDrops {
		out = append(out, finding.Finding{Code: finding.RunNICDrops, Severity: finding.Warn, Subject: d.NIC,
			Summary:  fmt.Sprintf("%s dropped %s of the packets it was offered (%s/s: %s)", d.NIC, pct(*d.OfferedShare), num(d.PerS), strings.Join(d.Counters, ", ")),
			Fix:      dropFix(d.NIC),
			Evidence: map[string]string{"count": num(d.Count)}})
	}
	if p := v.pauseLoss(); p != nil && v.Bound != BoundPause {
		out = append(out, finding.Finding{Code: finding.RunPause, Severity: finding.Warn, Subject: p.NIC,
			Summary:  fmt.Sprintf("%s counted %s pause frames/s (%s, %s)", p.NIC, num(p.PerS), p.Class, strings.Join(p.Counters, ", ")),
			Fix:      pauseFix(p),
			Evidence: map[string]string{"count": num(p.Count)}})
	}
	if a := v.lossOf(irq.LossAllowance); a != nil {
		out = append(out, finding.Finding{Code: finding.RunAllowance, Severity: finding.Warn, Subject: a.NIC,
			Summary:  fmt.Sprintf("%s exceeded its cloud allowance %s times (%s): the platform dropped or queued packets", a.NIC, num(a.Count), strings.Join(a.Counters, ", ")),
			Fix:      allowanceFix(a.NIC),
			Evidence: map[string]string{"count": num(a.Count), "counters": strings.Join(a.Counters, ", ")}})
	}
	return out
}

// dropFix is what to do about a NIC that dropped received packets.
func dropFix(nic string) string {
	return fmt.Sprintf("Give the NIC more receive buffers: ethtool -G %s rx N (ethtool -g %s shows the maximum); spread the receive work over more queues and cores: ethtool -L %s combined N; and check that the cores taking its interrupts are not saturated (nicdiag monitor).", nic, nic, nic)
}

// pauseFix is what to do about pause frames of p's class.
func pauseFix(p *Loss) string {
	if p.Class == irq.LossPauseTX {
		return fmt.Sprintf("This host's NIC ran out of receive buffers and asked the peer to stop: enlarge its receive ring (ethtool -G %s rx N) and spread the receive work (ethtool -L %s combined N); or turn flow control off so that the loss is seen end to end: ethtool -A %s rx off tx off.", p.NIC, p.NIC, p.NIC)
	}
	return fmt.Sprintf("The peer or the switch port is congested and asked this host to stop: look at the switch port's counters and its uplink; or turn flow control off so that the congestion is seen end to end: ethtool -A %s rx off tx off.", p.NIC)
}

// allowanceFix is what to do about a cloud allowance exceeded.
func allowanceFix(nic string) string {
	return fmt.Sprintf("The instance's network allowance (bandwidth, packets per second or connections) is the limit: watch which with ethtool -S %s | grep allowance; use an instance type with more network performance, spread the traffic over more instances, or send fewer, larger packets.", nic)
}
