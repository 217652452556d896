package stack

import (
	"encoding/json"
	"testing"
)

// judgement returns the first judgement of layer and kind, or nil.
func (s *Summary) judgement(layer Layer, kind string) *Judgement {
	for i := range s.Judgements {
		if j := &s.Judgements[i]; j.Layer == layer && j.Kind == kind {
			return j
		}
	}
	return nil
}

// state returns layer's state.
func (s *Summary) state(layer Layer) LayerStatus {
	for _, l := range s.Layers {
		if l.Layer == layer {
			return l
		}
	}
	return LayerStatus{}
}

// logMargins logs what the load moves: each TCP flow's rate and limit
// timers, and each judgement's share, so that a run's distance from a
// threshold shows in the log of a pass too.
func logMargins(t *testing.T, what string, s Summary) {
	t.Helper()
	for _, f := range s.Flows {
		if f.Proto == "tcp" && f.BytesSent+f.BytesReceived >= minFlowBytes {
			t.Logf("%s: flow %s→%s sent %.0f Mb/s, received %.0f Mb/s over %.2f s; busy %.2f, rwnd %.2f, sndbuf %.2f, recv queue full %.2f",
				what, f.Local, f.Peer, f.SendMbps, f.RecvMbps, f.Seconds, f.BusyShare, f.RwndLimitedShare, f.SndbufLimitedShare, f.RecvQueueFullShare)
		}
	}
	for _, j := range s.Judgements {
		t.Logf("%s: %s/%s bound %v share %.2f, %.1f of %.1f Mb/s", what, j.Layer, j.Kind, j.Bound, j.Share, j.AchievedMbps, j.CeilingMbps)
	}
}

// dump logs the summary (for a failure's diagnosis).
func dump(t *testing.T, s Summary) {
	t.Helper()
	_ = 0
	j, _ := json.MarshalIndent(s, "", " ")
	t.Logf("summary: %s", j)
}
