package stack

import (
	"cmp"
	"slices"
)

// flowAgg is one flow over the run.
type flowAgg struct {
	s                  FlowSummary
	span               spanAcc
	busy, rwnd, sndbuf uint64
	rttS, rttW         float64 // RTT × seconds, seconds
	rcvRTTS, rcvRTTW   float64
	minRTT             uint32
	rqFull, rqSeen     int // readings with the receive queue over half its buffer, readings
}

func (a *Aggregator) addFlow(f *Flow, dt float64) {
	k := flowID{f.Netns, f.Cookie}
	g := a.flows[k]
	if g == nil {
		if len(a.flows) >= maxAggFlows {
			a.dropped++
			return
		}
		g = &flowAgg{s: FlowSummary{Netns: f.Netns, Proto: f.Proto, Local: f.Local, Peer: f.Peer, PID: f.PID, Comm: f.Comm}}
		a.flows[k] = g
	}
	s := &g.s
	if f.Iface != "" {
		s.Iface = f.Iface
	}
	if s.Comm == "" && f.Comm != "" {
		// Named once a process scan has seen its process.
		s.PID, s.Comm = f.PID, f.Comm
	}
	active := f.BytesSent+f.BytesReceived > 0
	g.span.add(dt, active)
	s.BytesSent += f.BytesSent
	s.BytesReceived += f.BytesReceived
	s.BytesRetrans += f.BytesRetrans
	s.Drops += f.Drops
	g.busy += f.BusyUS
	g.rwnd += f.RwndLimitedUS
	g.sndbuf += f.SndbufLimitedUS
	s.Timers = s.Timers || f.Timers
	if active && f.RTTUS > 0 {
		g.rttS += float64(f.RTTUS) * dt
		g.rttW += dt
	}
	if active && f.RcvRTTUS > 0 {
		g.rcvRTTS += float64(f.RcvRTTUS) * dt
		g.rcvRTTW += dt
	}
	if f.MinRTTUS > 0 && (g.minRTT == 0 || f.MinRTTUS < g.minRTT) {
		g.minRTT = f.MinRTTUS
	}
	if f.SndWnd != nil {
		s.SndWndMax = max(s.SndWndMax, *f.SndWnd)
	}
	if f.RcvWnd != nil {
		s.RcvWndMax = max(s.RcvWndMax, *f.RcvWnd)
	}
	if f.Rcvbuf > 0 && f.BytesReceived > 0 {
		g.rqSeen++
		if 2*uint64(f.RmemAlloc) >= uint64(f.Rcvbuf) {
			g.rqFull++
		}
	}
	s.RcvbufMax = max(s.RcvbufMax, f.Rcvbuf)
	s.SndbufMax = max(s.SndbufMax, f.Sndbuf)
	s.CwndMax = max(s.CwndMax, f.Cwnd)
}

// summary returns the flow over its span.
func (g *flowAgg) summary() FlowSummary {
	s := g.s
	s.Seconds = g.span.span
	if s.Seconds > 0 {
		s.SendMbps = float64(s.BytesSent) * 8 / 1e6 / s.Seconds
		s.RecvMbps = float64(s.BytesReceived) * 8 / 1e6 / s.Seconds
		s.BusyShare = min(1, float64(g.busy)/1e6/s.Seconds)
	}
	if g.busy > 0 {
		s.RwndLimitedShare = float64(g.rwnd) / float64(g.busy)
		s.SndbufLimitedShare = float64(g.sndbuf) / float64(g.busy)
	}
	if s.BytesSent > 0 {
		s.RetransShare = float64(s.BytesRetrans) / float64(s.BytesSent)
	}
	if g.rttW > 0 {
		s.RTTMs = g.rttS / g.rttW / 1000
	}
	if g.rcvRTTW > 0 {
		s.RcvRTTMs = g.rcvRTTS / g.rcvRTTW / 1000
	}
	s.MinRTTMs = float64(g.minRTT) / 1000
	if g.rqSeen > 0 {
		s.RecvQueueFullShare = float64(g.rqFull) / float64(g.rqSeen)
	}
	return s
}

// flowSummaries returns the flows that moved data, the busiest first.
func (a *Aggregator) flowSummaries() []FlowSummary {
	out := make([]FlowSummary, 0, len(a.flows))
	for _, g := range a.flows {
		if s := g.summary(); s.BytesSent+s.BytesReceived > 0 || s.Drops > 0 {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(x, y FlowSummary) int {
		if r := cmp.Compare(y.BytesSent+y.BytesReceived, x.BytesSent+x.BytesReceived); r != 0 {
			return r
		}
		return cmp.Compare(x.Local+x.Peer, y.Local+y.Peer)
	})
	return out
}
