package nicdiag

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// A spent read budget fails Inspect and Check at once with the named error
// (also context.DeadlineExceeded) instead of reading on; the default
// budget leaves a snapshot's result as it was.
func TestReadBudget(t *testing.T) {
	root := scaleTree(t, 64)
	ctx := context.Background()
	if h, err := Inspect(ctx, option.Root(root), option.ReadBudget(time.Nanosecond)); !errors.Is(err, ErrReadBudget) ||
		!errors.Is(err, context.DeadlineExceeded) || h != nil {
		t.Errorf("Inspect = %v, %v; want ErrReadBudget", h, err)
	}
	if r, err := Check(ctx, option.Root(root), option.ReadBudget(time.Nanosecond)); !errors.Is(err, ErrReadBudget) || r != nil {
		t.Errorf("Check = %v, %v; want ErrReadBudget", r, err)
	}
	for _, opts := range [][]Option{{option.Root(root)}, {option.Root(root), option.ReadBudget(0)}, {option.Root(root), option.ReadBudget(time.Hour)}} {
		h, err := Inspect(ctx, append(opts, WithPCIIDs("/nonexistent"))...)
		if err != nil || len(h.Selected) != 64 {
			t.Fatalf("Inspect = %v, %v", h, err)
		}
	}
}

// A snapshot root gets one deadline, nicinfo.DefaultReadBudget from the
// call's start, for all its nicinfo calls; the live host none.
func TestReadBudgetDefault(t *testing.T) {
	before := time.Now()
	o := buildOptions([]Option{option.Root(t.TempDir())})
	if o.deadline.Before(before.Add(nicinfo.DefaultReadBudget)) || o.deadline.After(time.Now().Add(nicinfo.DefaultReadBudget)) {
		t.Errorf("deadline %v; want %v from now", o.deadline, nicinfo.DefaultReadBudget)
	}
	for _, opts := range [][]Option{{option.Root("/")}, {option.Root("")}, {option.Root(t.TempDir()), option.ReadBudget(0)}} {
		if o := buildOptions(opts); !o.deadline.IsZero() {
			t.Errorf("deadline %v; want none", o.deadline)
		}
	}
}

// A context deadline sooner than the budget ends the reads; a later one,
// or none, leaves the budget's end (none on the live host).
func TestReadBudgetContext(t *testing.T) {
	root := scaleTree(t, 1)
	soon := time.Now().Add(time.Second)
	ctxSoon, cancel := context.WithDeadline(context.Background(), soon)
	defer cancel()
	ctxLate, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancel2()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		opts []Option
		want func(time.Time) bool
	}{
		{"snapshot, sooner context", ctxSoon, []Option{option.Root(root)}, func(d time.Time) bool { return d.Equal(soon) }},
		{"snapshot, later context", ctxLate, []Option{option.Root(root)}, func(d time.Time) bool {
			return d.Before(time.Now().Add(nicinfo.DefaultReadBudget + time.Second))
		}},
		{"live, sooner context", ctxSoon, nil, func(d time.Time) bool { return d.Equal(soon) }},
		{"live, no context deadline", context.Background(), nil, time.Time.IsZero},
	} {
		o := buildOptions(tc.opts)
		o.bound(tc.ctx)
		if !tc.want(o.deadline) {
			t.Errorf("%s: reads end at %v", tc.name, o.deadline)
		}
	}
}
