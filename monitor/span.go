package monitor

import (
	"github.com/nicdiag/nicdiag/irq"
)

// spanShare: once a span has begun, a sample belongs to it when it moved
// at least this share of the span's busiest sample; a sample ten times
// busier than any before begins the span anew (what came before was
// background, or a warm-up). The share is small, so that an uneven run
// is one span, and a lull inside the run counts, as it does in the load
// generator's own report.
const spanShare = 0.1

// load is a sample's traffic: frame Mb/s and frames/s over every NIC and
// both directions.
type load struct{ mbps, pps float64 }

// moved reports whether l is traffic worth judging (minMbps, minPPS).
func (l load) moved() bool { return l.mbps >= minMbps || l.pps >= minPPS }

// below reports whether l is less than share of peak: in Mb/s, or in
// frames/s where no byte was counted.
func (l load) below(share float64, peak load) bool {
	if peak.mbps > 0 {
		return l.mbps < share*peak.mbps
	}
	return l.pps < share*peak.pps
}

func (l load) max(o load) load { return load{max(l.mbps, o.mbps), max(l.pps, o.pps)} }

// span is the run's span: from the first to the last sample that moved
// traffic (see spanShare). It keeps those two samples, the layers' sums
// over the samples between them (body), and over the samples after the
// last (pending: idle so far; they join the body when traffic comes
// again, and are left out when it does not).
type span struct {
	seen           bool // a usable sample came before (before the first, when set at begin)
	after          bool // the span's first sample had one before it
	bounded        bool // the load began after the monitor's first reading and ends with the run (commandRun)
	first, last    *irq.Sample
	body, pending  []layer
	bodyN, pendN   int // samples in body and pending
	bodySecs       float64
	pendSecs       float64
	peak, bodyLoad load // the busiest sample of the span; body's load × seconds
	pendLoad       load
}

// add weighs sample x (of a usable interval).
func (s *span) add(x *irq.Sample) {
	l := sampleLoad(x)
	defer func() { s.seen = true }()
	switch {
	case s.first == nil && !l.moved():
		return // before the run
	case s.first == nil || l.moved() && s.peak.below(spanShare, l):
		s.begin(x, l)
		return
	case !l.moved() || l.below(spanShare, s.peak):
		addAll(s.pending, x)
		s.pendN++
		s.pendSecs += x.IntervalS
		s.pendLoad = s.pendLoad.plus(l, x.IntervalS)
		return
	}
	if s.last != nil {
		addAll(s.body, s.last)
		s.bodyN++
		s.bodySecs += s.last.IntervalS
		s.bodyLoad = s.bodyLoad.plus(sampleLoad(s.last), s.last.IntervalS)
	}
	mergeAll(s.body, s.pending)
	s.bodyN += s.pendN
	s.bodySecs += s.pendSecs
	s.bodyLoad = s.bodyLoad.plus(s.pendLoad, 1)
	if s.pendN > 0 {
		s.pending, s.pendN, s.pendSecs, s.pendLoad = spanLayers(), 0, 0, load{}
	}
	s.last = x
	s.peak = s.peak.max(l)
}

// plus is l plus o weighted by w.
func (l load) plus(o load, w float64) load { return load{l.mbps + o.mbps*w, l.pps + o.pps*w} }

// begin makes x the first sample of a new span.
func (s *span) begin(x *irq.Sample, l load) {
	*s = span{seen: s.seen, after: s.seen, bounded: s.bounded, first: x, body: spanLayers(), pending: spanLayers(), peak: l}
}

// samples is the number of samples from the first to the last.
func (s *span) samples() int {
	switch {
	case s.first == nil:
		return 0
	case s.last == nil:
		return 1
	}
	return 2 + s.bodyN
}

// sums returns copies of the layers' sums over the span's interior (its
// samples between the first and the last; all of them when there are
// none between) and over the whole span, for the traffic. They are the
// caller's to turn into means: the span goes on summing.
func (s *span) sums() (interior, all []layer) {
	all = spanLayers()
	if s.first == nil {
		return all, all
	}
	mergeAll(all, s.body)
	addAll(all, s.first)
	if s.last != nil {
		addAll(all, s.last)
	}
	if s.bodyN > 0 {
		interior = spanLayers()
		mergeAll(interior, s.body)
		return interior, all
	}
	return all, all
}

// seconds is how long the span's traffic lasted: its samples' seconds,
// less the parts of its first and last sample before the traffic began
// and after it ended. Those are known only where the monitor saw the load
// begin or end: a sample before the first (or after the last) that moved
// less, or a command's run (commandRun), whose load began after the
// monitor's first reading and ended with the command. There the edge
// sample counts for the part its traffic fills at the interior's mean
// rate: a command's start (a server started, a connection set up) is not
// part of the load generator's own report either.
func (s *span) seconds() float64 {
	if s.first == nil {
		return 0
	}
	secs := s.bodySecs + s.edge(s.first, s.after)
	if s.last != nil {
		secs += s.edge(s.last, s.pendN > 0 || s.bounded)
	}
	return secs
}

// edge is the seconds of edge sample x: the part its traffic filled when
// trim, else all.
func (s *span) edge(x *irq.Sample, trim bool) float64 {
	if !trim {
		return x.IntervalS
	}
	return x.IntervalS * s.filled(sampleLoad(x))
}

func addAll(ls []layer, x *irq.Sample) {
	for _, l := range ls {
		l.add(x, x.IntervalS)
	}
}

func mergeAll(dst, src []layer) {
	for i := range dst {
		dst[i].merge(src[i])
	}
}

// sampleLoad is the sampled NICs' traffic in x.
func sampleLoad(x *irq.Sample) load {
	var l load
	for _, n := range x.NICs {
		rxP, txP, rxB, txB := nicRates(n)
		l.mbps += (frameBits(rxB, rxP) + frameBits(txB, txP)) / 1e6
		l.pps += rxP + txP
	}
	return l
}

// filled is the share of an edge sample that l fills at the interior's
// mean rate; 1 without an interior to compare with.
func (s *span) filled(l load) float64 {
	if s.bodySecs <= 0 {
		return 1
	}
	mean := load{s.bodyLoad.mbps / s.bodySecs, s.bodyLoad.pps / s.bodySecs}
	var f float64
	switch {
	case mean.mbps > 0:
		f = l.mbps / mean.mbps
	case mean.pps > 0:
		f = l.pps / mean.pps
	default:
		return 1
	}
	return min(1, f)
}
