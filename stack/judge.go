package stack

import (
	"cmp"
	"slices"
)

// maxSummaryFlows bounds the flows a Summary lists.
const maxSummaryFlows = 64

// Summary returns the run so far: per layer the numbers and the
// judgement. It may be called at any time; the Aggregator goes on.
func (a *Aggregator) Summary() Summary {
	s := Summary{Samples: a.samples, Seconds: a.seconds}
	flows := a.flowSummaries()
	nsm := map[uint64]NamespaceSummary{}
	for id, g := range a.ns {
		nsm[id] = g.s
		s.Namespaces = append(s.Namespaces, g.s)
	}
	slices.SortFunc(s.Namespaces, func(x, y NamespaceSummary) int { return cmp.Compare(x.ID, y.ID) })
	for _, g := range a.qdiscs {
		s.Qdiscs = append(s.Qdiscs, g.summary())
	}
	slices.SortFunc(s.Qdiscs, func(x, y QdiscSummary) int {
		return cmp.Or(cmp.Compare(x.Netns, y.Netns), cmp.Compare(x.Iface, y.Iface), cmp.Compare(x.Handle, y.Handle),
			cmp.Compare(x.Parent, y.Parent), boolCmp(x.Class, y.Class))
	})
	s.CPUs = a.cpuSummaries()
	for k, n := range a.ifs {
		s.Interfaces = append(s.Interfaces, InterfaceSummary{Netns: k.netns, Name: k.name, Flows: n})
	}
	slices.SortFunc(s.Interfaces, func(x, y InterfaceSummary) int {
		return cmp.Or(cmp.Compare(x.Netns, y.Netns), cmp.Compare(x.Name, y.Name))
	})
	for m := range a.missing {
		s.Missing = append(s.Missing, m)
	}
	slices.Sort(s.Missing)

	add := func(js []Judgement, st LayerStatus) {
		s.Judgements = append(s.Judgements, js...)
		s.Layers = append(s.Layers, st)
	}
	add(judgeTransport(flows, nsm, s.Missing))
	add(judgeSockets(s.Namespaces, flows))
	add(judgeQdiscs(s.Qdiscs, s.Missing))
	add(judgeConntrack(s.Namespaces))
	add(judgeOtherWork(s.CPUs, a.runPID, a.cpuSpan > 0))
	slices.SortStableFunc(s.Judgements, func(x, y Judgement) int {
		return cmp.Or(boolCmp(y.Bound && !y.Outside, x.Bound && !x.Outside), boolCmp(y.Bound, x.Bound), cmp.Compare(y.Share, x.Share))
	})
	s.Flows = flows[:min(len(flows), maxSummaryFlows)]
	return s
}

// boolCmp orders false before true.
func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// Bound returns the judgements that bound the run inside this host, the
// nearest to its limit first.
func (s *Summary) Bound() []Judgement {
	var out []Judgement
	for _, j := range s.Judgements {
		if j.Bound && !j.Outside {
			out = append(out, j)
		}
	}
	return out
}

// Room reports whether every layer was read and had room (or does not
// exist here): what a verdict that the limit is outside this host needs.
// When it is false, Layers says which layer bound the run or could not be
// read.
func (s *Summary) Room() bool {
	for _, l := range s.Layers {
		if l.State != StateRoom && l.State != StateNotApplicable {
			return false
		}
	}
	return true
}
