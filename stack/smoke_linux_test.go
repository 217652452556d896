package stack

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	b := newBed(t)
	b.server()
	s, err := NewSampler(context.Background(), WithNetns(b.path(b.A)), WithNetns(b.path(b.B)), WithInterfaces(b.VA))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := b.client("-t", "2")
	xs := sampleWhile(t, s, c, 500*time.Millisecond)
	for _, x := range xs {
		j, _ := json.Marshal(x)
		t.Logf("%s", j)
	}
}
