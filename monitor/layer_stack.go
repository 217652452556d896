package monitor

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nicdiag/nicdiag/stack"
)

// The stack's part of the verdict: a shaper's rate is a ceiling like a
// link's; the stack's other judgements (stack.Summary) bind a run that
// reached no ceiling; and the outside of this host is named only where
// every layer here had room.

// offerStack adds each shaping qdisc or class as a ceiling: what the run
// moved through it against its rate, at its own packet sizes (tc counts
// frames without their FCS; the verdict's unit adds 4 bytes a packet).
// A qdisc on a sampled NIC is measured over the run's span, as the NIC
// is: the stack counts a qdisc's samples whole from the first that moved
// a byte, and a load generator's control connection crosses the shaper
// before its data does (a 200 Mb/s tbf that passed 198 read 87 %, under
// the share that binds).
func (j *judgement) offerStack(v *Verdict) {
	if j.stack == nil {
		return
	}
	monitored := map[uint64]bool{} // the namespaces of the sampled NICs
	for _, n := range j.stack.Namespaces {
		monitored[n.ID] = !strings.HasPrefix(n.Path, "/proc/")
	}
	for i := range j.stack.Qdiscs {
		q := &j.stack.Qdiscs[i]
		limit := q.Limit()
		if limit == 0 || q.Seconds <= 0 || q.Bytes == 0 || q.Parent == "ingress" {
			continue
		}
		u := j.traffic.nic(q.Iface)
		onNIC := u != nil && monitored[q.Netns]
		secs := q.Seconds
		if onNIC && j.traffic.secs > 0 {
			secs = j.traffic.secs
		}
		bps, pps := float64(q.Bytes)/secs, float64(q.Packets)/secs
		share := math.Min(bps/float64(limit), 1)
		c := Ceiling{Layer: BoundQdisc, Subject: q.Name(), Direction: "tx", Share: share,
			What: fmt.Sprintf("the %s shaping to %s", q.Name(), mbps(float64(limit)*8/1e6)),
			held: q.HeldBack()}
		if onNIC {
			c.NICs = []string{q.Iface}
			c.AchievedMbps = frameBits(u.txBPS, u.txPPS) / 1e6
		} else {
			c.NICs = j.traffic.names()
			c.AchievedMbps = frameBits(bps, pps) / 1e6
		}
		if share > 0 {
			c.CeilingMbps = c.AchievedMbps / share
		}
		v.Ceilings = append(v.Ceilings, c)
	}
}

// heldFirst moves the first shaper among cs that held the traffic back
// (stack's QdiscSummary.HeldBack) while it carried stack.ShaperHeldMin of
// its rate or more to the front of cs: the traffic wanted more than it let
// through, so it is the limit, whatever a CPU's share.
func heldFirst(cs []Ceiling) {
	i := slices.IndexFunc(cs, func(c Ceiling) bool { return c.Layer == BoundQdisc && c.held && c.Share >= stack.ShaperHeldMin })
	if i > 0 {
		held := cs[i]
		copy(cs[1:i+1], cs[:i])
		cs[0] = held
	}
}

// causeOrder is the order in which the stack's layers are asked for what
// bound a run that reached no ceiling: the CPUs first, then the layers
// from the socket down.
var causeOrder = []stack.Layer{stack.LayerOtherWork, stack.LayerSocket, stack.LayerQdisc, stack.LayerConntrack, stack.LayerTransport}

// stackCause returns what in this host's stack bound a run that reached
// no ceiling: the run's CPUs busy with other work, else the first of
// causeOrder's layers with a judgement that bound it inside this host;
// nil for none.
func (j *judgement) stackCause() *stack.Judgement {
	if o := j.otherWork(nil); o != nil {
		return o
	}
	return j.stackLimit()
}

// stackLimit returns the first judgement, in causeOrder, of the stack's
// layers but other work that bound the run inside this host: a window, a
// send buffer, drops at a socket, a qdisc (a shaper that held back under
// its ceiling's share, or drops), conntrack; nil for none.
func (j *judgement) stackLimit() *stack.Judgement {
	if j.stack == nil {
		return nil
	}
	bound := j.stack.Bound()
	for _, layer := range causeOrder[1:] {
		for i := range bound {
			if bound[i].Layer == layer {
				c := bound[i]
				return &c
			}
		}
	}
	return nil
}

// boundOfLayer is the verdict's Bound for a stack layer.
func boundOfLayer(l stack.Layer) Bound {
	switch l {
	case stack.LayerTransport:
		return BoundTransport
	case stack.LayerSocket:
		return BoundSocket
	case stack.LayerQdisc:
		return BoundQdisc
	case stack.LayerConntrack:
		return BoundConntrack
	}
	return BoundOtherWork
}

// causeSentence words a run bound by this host's stack.
func (j *judgement) causeSentence(c *stack.Judgement) string {
	names := j.traffic.names()
	s := fmt.Sprintf("%s moved %s; %s bound this run: %s", subjectOf(names), j.movedText(names), causeWords(c), c.Summary)
	if c.Layer == stack.LayerSocket && c.Kind != "listen_overflow" && c.Share > 0 && c.Share < 1 { // a share of bytes, not of connections
		got := j.traffic.maxDirMbps(names)
		s += fmt.Sprintf(" (of the %s that arrived, about %s reached the application)", mbps(got), mbps(got*(1-math.Min(c.Share, 1))))
	}
	return s
}

// causeWords names a stack judgement's layer in a sentence.
func causeWords(c *stack.Judgement) string {
	switch c.Kind {
	case "local_window":
		return "this host's receive window"
	case "send_buffer":
		return "the sending socket's buffer"
	case "shaper":
		return "a shaper's rate"
	case "qdisc_drops":
		return "a qdisc's drops"
	case "conntrack_drops", "conntrack_full":
		return "the connection tracking table"
	case "other_work", "steal":
		return "other work on the run's CPUs"
	}
	if c.Layer == stack.LayerSocket {
		return "drops at a socket"
	}
	return string(c.Layer)
}

// room reports whether every layer of this host's stack had room (or
// does not exist here), and otherwise what could not be read. Other work
// that the stack could not tell from the run's (no process tree, no scan)
// is judged by the CPUs' busy time: a run whose CPUs did not reach a
// ceiling or bind by other work (stackCause) had room there.
func (j *judgement) room() (bool, []string) {
	if j.stack == nil {
		return false, []string{"this host's stack (transport, sockets, qdiscs, conntrack, other work)"}
	}
	var unread []string
	for _, l := range j.stack.Layers {
		switch {
		case l.State == stack.StateRoom || l.State == stack.StateNotApplicable:
		case l.Layer == stack.LayerOtherWork && l.State == stack.StateUnknown && len(j.cpu.sorted) > 0:
		case l.State == stack.StateUnknown:
			unread = append(unread, fmt.Sprintf("the %s layer (%s)", l.Layer, l.Note))
		}
	}
	return len(unread) == 0, unread
}

// outsideEvidence is what the stack saw of a limit outside this host: a
// flow held by the peer's window, loss or congestion on the path, or an
// application that set its own pace.
func (j *judgement) outsideEvidence() string {
	if j.stack == nil {
		return ""
	}
	for _, g := range j.stack.Judgements {
		if g.Layer == stack.LayerTransport && (g.Outside || g.Kind == "app_limited") {
			return "; " + g.Summary
		}
	}
	return ""
}

// stackCPU returns the stack's work on CPU id, or nil.
func (j *judgement) stackCPU(id int) *stack.CPUSummary {
	if j.stack == nil {
		return nil
	}
	for i := range j.stack.CPUs {
		if j.stack.CPUs[i].CPU == id {
			return &j.stack.CPUs[i]
		}
	}
	return nil
}

// scanned reports whether the stack's process scans covered the run.
func (j *judgement) scanned() bool {
	if j.stack == nil {
		return false
	}
	for _, l := range j.stack.Layers {
		if l.Layer == stack.LayerOtherWork {
			return l.State != stack.StateUnknown || l.Note != stack.NoteNotScanned
		}
	}
	return false
}

// cpuLoads is each CPU's load over the span, with the other work on it.
func (j *judgement) cpuLoads() []CPULoad {
	var out []CPULoad
	for _, u := range j.cpu.sorted {
		c := loadOf(u)
		if f := j.foreign(u); f.scanned {
			c.OtherPct, c.Other = &f.other, f.top
		}
		out = append(out, c)
	}
	return out
}

// watched lists the sampled interfaces, why each is watched, and whether
// the verdict judged it.
func (j *judgement) watched() []Watched {
	judged := j.traffic.names()
	var out []Watched
	for _, u := range j.traffic.nics {
		w := Watched{NIC: u.name, Judged: slices.Contains(judged, u.name)}
		if l, ok := j.lim[u.name]; ok {
			w.Why, w.Virtual = l.Why, l.Virtual
		}
		out = append(out, w)
	}
	return out
}

// watchedText says which interfaces were judged and why, for a verdict's
// evidence: "ndi0 (the command's flows leave by it)".
func watchedText(ws []Watched) string {
	var parts []string
	for _, w := range ws {
		if !w.Judged {
			continue
		}
		s := w.NIC
		if w.Why != "" {
			s += " (" + whyWords(w.Why) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
