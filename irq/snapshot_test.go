package irq

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// TestMapQueuesSnapshots maps the queues of real machines' snapshots
// (testdata/snapshots, see its README for each source).
func TestMapQueuesSnapshots(t *testing.T) {
	for _, tc := range []struct {
		snap, nic string
		want      string // "irq kind-index" of each vector, joined
	}{
		{"82576-minipcie-x1", "enp1s0f0", "26 other--1, 27 txrx-0, 28 txrx-1"},
		{"ccr2004-host", "enp1s0f2", "129 txrx-0"},
		{"xeon-i350-sriov-bcm5709", "eno1", "72 txrx-0, 73 txrx-1, 74 txrx-2, 75 txrx-3, 76 txrx-4, 77 txrx-5, 78 txrx-6, 79 txrx-7, 80 txrx-8"},
	} {
		root := "../testdata/snapshots/" + tc.snap
		if _, err := os.Stat(root + "/proc/interrupts"); err != nil {
			t.Skipf("snapshot %s not there yet: %v", tc.snap, err)
		}
		nic, err := nicinfo.Get(context.Background(), tc.nic, option.Root(root))
		if err != nil {
			t.Fatalf("%s: %v", tc.snap, err)
		}
		x, err := ReadInterrupts(context.Background(), option.Root(root))
		if err != nil {
			t.Fatalf("%s: %v", tc.snap, err)
		}
		nq := MapQueues(*nic, x, option.Root(root))
		var got []string
		for _, q := range nq.Queues {
			got = append(got, fmt.Sprintf("%d %s-%d", q.IRQ, q.Kind, q.Index))
			if len(q.CPUs) == 0 {
				t.Errorf("%s %s IRQ %d: no CPU from /proc/irq", tc.snap, tc.nic, q.IRQ)
			}
		}
		if s := strings.Join(got, ", "); s != tc.want {
			t.Errorf("%s %s (%s) = %s; want %s", tc.snap, tc.nic, nq.MatchedBy, s, tc.want)
		}
	}
}

// TestReadDeadline: a past deadline stops the one-shot readers of a
// snapshot at once, whichever order the options come in; a future one
// reads as without it.
func TestReadDeadline(t *testing.T) {
	root := "../testdata/snapshots/82576-minipcie-x1"
	ctx := context.Background()
	past := time.Now().Add(-time.Second)
	for _, opts := range [][]Option{
		{option.Root(root), option.ReadDeadline(past)},
		{option.ReadDeadline(past), option.Root(root)},
	} {
		if x, err := ReadInterrupts(ctx, opts...); !errors.Is(err, context.DeadlineExceeded) || x != nil {
			t.Errorf("ReadInterrupts past its deadline = %v, %v; want context.DeadlineExceeded", x, err)
		}
		if _, err := ReadCPUs(opts...); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ReadCPUs past its deadline: %v; want context.DeadlineExceeded", err)
		}
	}
	x, err := ReadInterrupts(ctx, option.Root(root), option.ReadDeadline(time.Now().Add(time.Hour)))
	if err != nil || len(x.Lines) == 0 {
		t.Errorf("ReadInterrupts before its deadline = %v, %v", x, err)
	}
}
