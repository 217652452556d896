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

// dump logs the summary (for a failure's diagnosis).
func dump(t *testing.T, s Summary) {
	t.Helper()
	_ = 0
	j, _ := json.MarshalIndent(s, "", " ")
	t.Logf("summary: %s", j)
}
