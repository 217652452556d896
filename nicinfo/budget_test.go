package nicinfo

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/option"
)

// A spent read budget stops List at once with the named error (which is
// also context.DeadlineExceeded), on a snapshot of any size; without one,
// or with the default, the same snapshot lists as always.
func TestReadBudget(t *testing.T) {
	dir := needSnap(t, "xeon-i350-sriov-bcm5709")
	ctx := context.Background()
	want, err := List(ctx, option.Root(dir), WithPCIIDs("testdata/pci.ids"))
	if err != nil || len(want) < 8 {
		t.Fatalf("List = %d NICs, %v", len(want), err)
	}
	for _, opts := range [][]Option{
		{option.Root(dir), option.ReadBudget(time.Nanosecond)},
		{option.ReadBudget(time.Nanosecond), option.Root(dir)}, // either order
		{option.Root(dir), option.ReadDeadline(time.Now().Add(-time.Second))},
	} {
		start := time.Now()
		nics, err := List(ctx, append(opts, WithPCIIDs("testdata/pci.ids"))...)
		if !errors.Is(err, ErrReadBudget) || !errors.Is(err, context.DeadlineExceeded) || nics != nil {
			t.Errorf("List = %d NICs, %v; want ErrReadBudget", len(nics), err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("a spent budget took %v", d)
		}
		if n, err := Get(ctx, want[0].Name, opts...); !errors.Is(err, ErrReadBudget) || errors.Is(err, ErrNoInterface) || n != nil {
			t.Errorf("Get = %v, %v; want ErrReadBudget, not a missing interface", n, err)
		}
		if p := ReadPlatform(ctx, opts...); p.CPUs != 0 || p.ProductName != "" {
			t.Errorf("ReadPlatform read past the budget: %+v", p)
		}
	}
	for _, opts := range [][]Option{
		{option.Root(dir)},
		{option.Root(dir), option.ReadBudget(time.Hour)},
		{option.Root(dir), option.ReadBudget(0)},
	} {
		got, err := List(ctx, append(opts, WithPCIIDs("testdata/pci.ids"))...)
		if err != nil || len(got) != len(want) {
			t.Errorf("List = %d NICs, %v; want %d", len(got), err, len(want))
		}
		for i := range got {
			if i < len(want) && strings.Join(got[i].Missing, ",") != strings.Join(want[i].Missing, ",") {
				t.Errorf("%s: missing %q, want %q", got[i].Name, got[i].Missing, want[i].Missing)
			}
		}
	}
}

// A snapshot root gets DefaultReadBudget unless told otherwise, the
// ethtool answers included; the live host gets none.
func TestDefaultReadBudget(t *testing.T) {
	dir := needSnap(t, "virtio-kvm")
	before := time.Now()
	o := buildOptions([]Option{option.Root(dir)})
	dl, ok := o.root.Deadline()
	if !ok || dl.Before(before.Add(DefaultReadBudget)) || dl.After(time.Now().Add(DefaultReadBudget)) {
		t.Errorf("snapshot deadline %v, %v; want %v from now", dl, ok, DefaultReadBudget)
	}
	if fe, isFile := o.ethtool.(fileEthtool); !isFile {
		t.Errorf("ethtool source %T", o.ethtool)
	} else if edl, _ := fe.root.Deadline(); !edl.Equal(dl) {
		t.Errorf("ethtool deadline %v, root %v", edl, dl)
	}
	if _, ok := buildOptions([]Option{option.Root(dir), option.ReadBudget(-1)}).root.Deadline(); ok {
		t.Error("option.ReadBudget(-1) left a deadline")
	}
	if _, ok := buildOptions([]Option{option.Root("/")}).root.Deadline(); ok {
		t.Error("the live host got a deadline")
	}
	// A partial read names the budget in Missing: the deadline passes after
	// the interface list, before the NIC's files.
	o = buildOptions([]Option{option.Root(dir), WithPCIIDs("testdata/pci.ids")})
	o.root = o.root.WithBudget(time.Nanosecond)
	time.Sleep(time.Millisecond)
	nics, err := build(context.Background(), o, []string{"eth0"})
	if err != nil || len(nics) != 1 || !hasMissing(&nics[0], "sysfs: time budget for the root spent") {
		t.Errorf("build = %+v, %v", nics, err)
	}
}
