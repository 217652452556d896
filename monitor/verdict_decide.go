package monitor

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/stack"
)

// physical reports whether a layer is a ceiling of the path a packet
// takes (a link, a bus, a shaper's rate), not of a CPU.
func physical(b Bound) bool {
	return b == BoundEthernet || b == BoundPCIe || b == BoundTunnel || b == BoundUSB || b == BoundQdisc
}

// sortCeilings orders ceilings nearest first; a physical ceiling within
// physicalEdge of a CPU one goes first.
func sortCeilings(cs []Ceiling) {
	slices.SortStableFunc(cs, func(a, b Ceiling) int {
		if d := a.Share - b.Share; math.Abs(d) > physicalEdge || physical(a.Layer) == physical(b.Layer) {
			if c := cmp.Compare(b.Share, a.Share); c != 0 {
				return c
			}
			return cmp.Compare(a.Subject, b.Subject)
		}
		if physical(a.Layer) {
			return -1
		}
		return 1
	})
}

// decide sets Bound, Limit, Next, the numbers and the summary.
func (v *Verdict) decide(j *judgement) {
	var host []Ceiling // ceilings inside the host
	for _, c := range v.Ceilings {
		if c.Layer != LayerCard {
			host = append(host, c)
		}
	}
	reached := len(host) > 0 && (host[0].Share >= boundShare || host[0].held)
	if len(host) > 0 && (!reached || !physical(host[0].Layer)) {
		// Before a CPU's ceiling: what this host's stack lost or
		// stalled the run's flows on (a window, a send buffer, drops at
		// a socket, a qdisc or conntrack): a flow that waited on its
		// window did not wait on a CPU.
		if o := j.stackLimit(); o != nil {
			n := host[0]
			v.Next = &n
			v.setNumbers(n)
			v.setCause(j, o)
			return
		}
	}
	if reached {
		c := host[0]
		if o := j.otherWork(&c); o != nil {
			// The full CPU was full of work that is not the run's.
			v.Next = &c
			v.setNumbers(c)
			v.setCause(j, o)
			return
		}
		v.Bound, v.Limit = c.Layer, &c
		if len(host) > 1 {
			n := host[1]
			v.Next = &n
		}
		v.setNumbers(c)
		v.Summary = v.boundSentence(j)
		return
	}
	if len(host) > 0 {
		n := host[0]
		v.Next = &n
		v.setNumbers(n)
	} else {
		v.AchievedMbps = j.traffic.maxDirMbps(j.traffic.names())
	}
	v.decideUnbound(j)
}

// decideUnbound sets the bound and summary of a run that reached no
// ceiling: what it lost, else outside the host.
func (v *Verdict) decideUnbound(j *judgement) {
	names := j.traffic.names()
	room, unread := j.room()
	switch drops, pause, allowance, cause := v.lossOf(irq.LossNIC), v.pauseLoss(), v.lossOf(irq.LossAllowance), j.stackCause(); {
	case cause != nil:
		v.setCause(j, cause)
	case drops != nil:
		v.Bound = BoundNICDrops
		v.Summary = fmt.Sprintf("%s dropped %s of the packets it was offered (%s/s, %s) before the stack saw them, while no ceiling was reached (%s): the run lost packets at the NIC",
			drops.NIC, pct(*drops.OfferedShare), num(drops.PerS), strings.Join(drops.Counters, ", "), v.nearest())
	case pause != nil:
		v.Bound = BoundPause
		who := "the peer throttled this host: it sent pause frames asking it to stop sending"
		if pause.Class == irq.LossPauseTX {
			who = "this host throttled the peer: its NIC sent pause frames because it could not take more"
		}
		v.Summary = fmt.Sprintf("%s counted %s pause frames/s (%s) while no ceiling was reached (%s): %s",
			pause.NIC, num(pause.PerS), strings.Join(pause.Counters, ", "), v.nearest(), who)
	case allowance != nil:
		v.Bound = BoundOutside
		v.Summary = fmt.Sprintf("%s exceeded its cloud allowance %s times (%s) while nothing in this host was near its limit (%s): the platform, outside this host, shaped the run",
			allowance.NIC, num(allowance.Count), strings.Join(allowance.Counters, ", "), v.nearest())
	case len(v.Ceilings) == 0 && v.BusiestCPU == nil:
		// Only nothing at all is unknown: a card's known rate, or CPUs
		// that were read and not saturated, are something to judge by.
		v.Bound = BoundUnknown
		v.Summary = fmt.Sprintf("%s moved %s, but nothing is known to judge it against: no line rate, PCIe path or CPU load was read", subjectOf(names), j.movedText(names))
	case !room:
		v.Bound = BoundUnknown
		v.Summary = fmt.Sprintf("%s moved %s; nothing read in this host was near its limit (%s), but %s could not be read: the limit is there or outside this host",
			subjectOf(names), j.movedText(names), v.nearest(), strings.Join(unread, "; "))
		v.unread = unread
	default:
		v.Bound = BoundOutside
		v.Summary = fmt.Sprintf("%s moved %s; nothing in this host was near its limit (%s; its stack had room): the limit is outside this host: %s%s",
			subjectOf(names), j.movedText(names), v.nearest(), outsideWhat(j), j.outsideEvidence())
	}
}

// setCause makes the stack's judgement c the verdict.
func (v *Verdict) setCause(j *judgement, c *stack.Judgement) {
	v.Bound, v.Cause = boundOfLayer(c.Layer), c
	v.Summary = j.causeSentence(c)
	if n := v.Next; n != nil {
		v.Summary += fmt.Sprintf(". Nearest ceiling: %s at %s", n.What, pct(n.Share))
	}
}

// setNumbers takes the verdict's numbers from c.
func (v *Verdict) setNumbers(c Ceiling) {
	v.AchievedMbps = c.AchievedMbps
	ceil, share := c.CeilingMbps, c.Share
	v.CeilingMbps, v.Share = &ceil, &share
}

// nearest names the nearest ceiling and its share, and the busiest CPU.
func (v *Verdict) nearest() string {
	var parts []string
	for _, c := range v.Ceilings {
		if c.Layer != LayerCard {
			parts = append(parts, fmt.Sprintf("the nearest ceiling, %s, at %s", c.What, pct(c.Share)))
			break
		}
	}
	if b := v.BusiestCPU; b != nil {
		parts = append(parts, fmt.Sprintf("the busiest core, CPU %d, %.0f %% busy", b.CPU, b.BusyPct))
	}
	if len(parts) == 0 {
		return "no ceiling is known"
	}
	return strings.Join(parts, "; ")
}

// boundSentence words a run that reached its Limit.
func (v *Verdict) boundSentence(j *judgement) string {
	c := v.Limit
	moved := j.movedText(c.NICs)
	var s string
	switch c.Layer {
	case BoundCore:
		s = coreSentence(j, c, moved)
	case BoundCommand:
		s = c.What
		if t := j.command.thread(c.TID); t != nil {
			s += fmt.Sprintf(" used %.0f %% of a CPU (%.0f %% user, %.0f %% system)", t.busy(), t.user, t.system)
			if u := j.cpu.cpu(*c.CPU); u != nil {
				s += fmt.Sprintf(" with %s %.0f %% busy", cpuName(*c.CPU), u.busy+u.steal)
			}
		}
		s += fmt.Sprintf(" while %s moved %s: the command bound this run, not the network path", subjectOf(c.NICs), moved)
	case BoundQdisc:
		s = fmt.Sprintf("%s moved %s, %s of what %s lets through (%s of frames at this run's mix): the shaper bound this run",
			subjectOf(c.NICs), moved, pct(c.Share), c.What, mbps(c.CeilingMbps))
		if b := v.BusiestCPU; b != nil {
			s += fmt.Sprintf("; the busiest core was %.0f %% busy", b.BusyPct)
		}
	default:
		s = fmt.Sprintf("%s moved %s, %s of the %s %s carries at this run's mix: %s bound this run",
			subjectOf(c.NICs), moved, pct(c.Share), mbps(c.CeilingMbps), c.What, layerWords(c.Layer))
		if b := v.BusiestCPU; b != nil {
			s += fmt.Sprintf("; the busiest core was %.0f %% busy", b.BusyPct)
		}
	}
	if n := v.Next; n != nil {
		s += fmt.Sprintf(". Next: %s at %s", n.What, pct(n.Share))
	}
	return s
}

// coreSentence words a run bound by the core of c.
func coreSentence(j *judgement, c *Ceiling, moved string) string {
	s := fmt.Sprintf("%s was %s busy", cpuName(*c.CPU), pct(c.Share))
	u := j.cpu.cpu(*c.CPU)
	if u != nil {
		s += fmt.Sprintf(", %.0f %% in irq+softirq,", u.packet)
	}
	s += fmt.Sprintf(" while %s moved %s: that core bound this run", subjectOf(c.NICs), moved)
	if !j.cpu.accounted {
		s += " (this kernel does not account hard-IRQ time: it hides in the time of what it interrupted, and irq+softirq reads low)"
	}
	if u != nil && u.packet >= 1 && u.packet >= ownCPUShare*u.busy && u.packet < hotPacketPct {
		s += fmt.Sprintf(" (with only packet work on it, it would carry about %s)", mbps(c.AchievedMbps*100/u.packet))
	}
	if q := j.queues.oneQueueOn(*c.CPU); q != nil {
		s += fmt.Sprintf("; %s: one flow, or a hash that puts the flows together, on one queue", q.words())
	}
	return s
}

func layerWords(b Bound) string {
	switch b {
	case BoundEthernet:
		return "the Ethernet link"
	case BoundPCIe:
		return "the PCIe path"
	case BoundTunnel:
		return "the tunnel"
	case BoundUSB:
		return "the USB bus"
	}
	return string(b)
}

// movedText is "1378 Mb/s per direction" or "940 Mb/s rx and 38 Mb/s tx"
// for the NICs named, over the span.
func (j *judgement) movedText(names []string) string {
	rx, tx, rxF, txF := j.traffic.dirMbps(names)
	hi := math.Max(rx, tx)
	if hi > 0 && math.Abs(rx-tx) <= 0.05*hi {
		return fmt.Sprintf("%s per direction (%s frames/s)", mbps(hi), num(math.Max(rxF, txF)))
	}
	return fmt.Sprintf("%s rx and %s tx (%s and %s frames/s)", mbps(rx), mbps(tx), num(rxF), num(txF))
}

func subjectOf(names []string) string {
	if len(names) == 0 {
		return "the host"
	}
	return strings.Join(names, "+")
}
