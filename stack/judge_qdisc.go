package stack

import (
	"fmt"
	"strings"
)

// ShaperHeldMin: a shaper that held packets back (HeldBack) and carried
// at least this share of its rate bound the run.
const ShaperHeldMin = 0.75

// Thresholds of the qdisc judgement.
const (
	// shaperFullMin: a shaper that carried this share of its rate bound
	// the run (as a link at 90 % does).
	shaperFullMin = 0.9
	// overlimitMin: a qdisc held packets back (HeldBack) when its
	// overlimits were at least this share of its packets.
	overlimitMin = 0.01
	// qdiscDropMin: a qdisc that dropped this share of its packets (and
	// dropRateMin a second) bound the run.
	qdiscDropMin = 0.01
)

// judgeQdiscs judges each qdisc and class that moved data: a shaper's
// rate is a ceiling, and drops are losses of this host.
func judgeQdiscs(qs []QdiscSummary, missing []string) ([]Judgement, LayerStatus) {
	st := LayerStatus{Layer: LayerQdisc, State: StateNotApplicable, Note: "no qdisc was read"}
	if len(qs) > 0 {
		st = LayerStatus{Layer: LayerQdisc, State: StateRoom}
	} else if m := firstWith(missing, "qdiscs of"); m != "" {
		st = LayerStatus{Layer: LayerQdisc, State: StateUnknown, Note: m}
	}
	var out []Judgement
	for i := range qs {
		q := &qs[i]
		for _, j := range judgeQdisc(q) {
			if j.Bound {
				st = LayerStatus{Layer: LayerQdisc, State: StateBound, Note: j.Summary}
			}
			out = append(out, j)
		}
	}
	return out, st
}

// Limit is the most a qdisc or class lets through, in bytes per second
// (0: no shaping rate): an htb class under another class borrows up to
// its ceil; one under the qdisc has no class to borrow from and stops at
// its rate.
func (q *QdiscSummary) Limit() uint64 {
	if q.Class && q.Ceil > 0 && q.Parent != "root" && !strings.HasSuffix(q.Parent, ":") {
		return q.Ceil
	}
	return q.Rate
}

// HeldBack reports whether the qdisc held packets back: overlimits at
// least 1 % of its packets (a shaper whose traffic wanted more than its
// rate).
func (q *QdiscSummary) HeldBack() bool {
	return q.Packets > 0 && float64(q.Overlimits)/float64(q.Packets) >= overlimitMin
}

// Name names a qdisc in a sentence: "tbf 1: on veth0", "htb class 1:10
// on eth0".
func (q *QdiscSummary) Name() string {
	if q.Class {
		return fmt.Sprintf("%s class %s on %s", q.Kind, q.Handle, q.Iface)
	}
	return fmt.Sprintf("%s %s on %s", q.Kind, q.Handle, q.Iface)
}

// judgeQdisc judges one qdisc or class.
func judgeQdisc(q *QdiscSummary) []Judgement {
	var out []Judgement
	rate := q.Limit()
	if rate > 0 && q.Seconds > 0 {
		ceil := float64(rate) * 8 / 1e6
		share := q.Mbps / ceil
		held := q.HeldBack()
		j := Judgement{Layer: LayerQdisc, Kind: "shaper", Subject: q.Name(), AchievedMbps: q.Mbps, CeilingMbps: ceil,
			Share: share, Bound: share >= shaperFullMin || (held && share >= ShaperHeldMin)}
		j.Summary = fmt.Sprintf("the %s shapes to %s: the run's traffic through it moved %s, %s of that rate", q.Name(), mbpsText(ceil), mbpsText(q.Mbps), shareText(share))
		if held {
			j.Summary += fmt.Sprintf(", and %s packets waited for its tokens", countText(q.Overlimits))
		}
		j.Fix = shaperFix(q)
		j.Evidence = []string{fmt.Sprintf("sent %d bytes, %d packets; overlimits %d, drops %d, requeues %d", q.Bytes, q.Packets, q.Overlimits, q.Drops, q.Requeues)}
		out = append(out, j)
	}
	if q.Drops > 0 && q.Seconds > 0 {
		share := float64(q.Drops) / float64(q.Packets+q.Drops)
		out = append(out, Judgement{Layer: LayerQdisc, Kind: "qdisc_drops", Subject: q.Name(), Share: share,
			Bound:    share >= qdiscDropMin && float64(q.Drops)/q.Seconds >= dropRateMin,
			Summary:  fmt.Sprintf("the %s dropped %s of the packets it was given (%s): its queue was full", q.Name(), shareText(share), countText(q.Drops)),
			Fix:      dropFix(q),
			Evidence: []string{fmt.Sprintf("drops %d, sent %d packets, backlog up to %s", q.Drops, q.Packets, bytesText(float64(q.BacklogMax)))}})
	}
	return out
}

// shaperFix is the command that lifts a shaper's rate (to twice the
// rate it set), or removes it.
func shaperFix(q *QdiscSummary) string {
	rate := q.Limit()
	to := tcRate(float64(rate) * 2 * 8)
	where := fmt.Sprintf("dev %s %s", q.Iface, parentArg(q))
	switch {
	case q.Class && q.Kind == "htb":
		return fmt.Sprintf("tc class change dev %s classid %s htb rate %s ceil %s (and its parents' ceil), if the shaping is not meant that low",
			q.Iface, q.Handle, tcRate(float64(min(q.Rate, rate))*8), to)
	case q.Kind == "tbf":
		burst := max(rate*2/100, 64<<10) // 10 ms of the new rate
		return fmt.Sprintf("tc qdisc change %s tbf rate %s burst %d latency 50ms, or tc qdisc del %s if the shaping is not meant", where, to, burst, where)
	case q.Kind == "cake":
		return fmt.Sprintf("tc qdisc change %s cake bandwidth %s (or unlimited)", where, to)
	case q.Kind == "fq":
		return fmt.Sprintf("tc qdisc change %s fq maxrate %s (or no maxrate)", where, to)
	}
	return fmt.Sprintf("tc -s qdisc show dev %s, and lift the shaping if it is not meant", q.Iface)
}

// tcRate renders bits per second as tc reads them: "400mbit", "2500kbit".
func tcRate(bits float64) string {
	switch {
	case bits >= 1e9 && bits == float64(int64(bits/1e9))*1e9:
		return fmt.Sprintf("%dgbit", int64(bits/1e9))
	case bits >= 1e6:
		return fmt.Sprintf("%dmbit", int64(bits/1e6))
	}
	return fmt.Sprintf("%dkbit", max(int64(bits/1e3), 1))
}

// dropFix is the command that gives a dropping qdisc room.
func dropFix(q *QdiscSummary) string {
	switch q.Kind {
	case "pfifo_fast", "pfifo", "bfifo", "noqueue":
		return fmt.Sprintf("a longer transmit queue: ip link set dev %s txqueuelen 10000", q.Iface)
	}
	return fmt.Sprintf("a longer queue for the %s (its limit, tc qdisc change dev %s %s %s ...), or a shaper rate the traffic fits", q.Kind, q.Iface, parentArg(q), q.Kind)
}

// parentArg renders where a qdisc hangs for tc: "root" or "parent 1:".
func parentArg(q *QdiscSummary) string {
	if q.Parent == "root" || q.Parent == "ingress" {
		return q.Parent
	}
	return "parent " + q.Parent
}
