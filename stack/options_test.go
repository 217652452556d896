package stack

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/option"
)

// TestReadDeadline: option.ReadDeadline, the read limit every package
// takes, bounds the reads of a recorded /proc: a deadline already past
// refuses the sampler with an error matching context.DeadlineExceeded,
// where the same tree with a deadline ahead reads whole.
func TestReadDeadline(t *testing.T) {
	ctx := context.Background()
	root := option.Root("testdata/vm-6.18")
	s, err := NewSampler(ctx, root, option.ReadDeadline(time.Now().Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Read(ctx)
	s.Close()
	if err != nil || len(x.Namespaces) == 0 || x.Namespaces[0].Conntrack.Max != 262144 {
		t.Fatalf("with the deadline ahead: %v, %+v", err, x.Namespaces)
	}
	if s, err := NewSampler(ctx, root, option.ReadDeadline(time.Now().Add(-time.Second))); !errors.Is(err, context.DeadlineExceeded) {
		if s != nil {
			s.Close()
		}
		t.Errorf("with the deadline past: %v; want an error matching context.DeadlineExceeded", err)
	}
}
