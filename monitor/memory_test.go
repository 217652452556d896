package monitor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/option"
)

// wideRoot writes a host tree of ncpu CPUs: /proc/stat, /proc/softirqs,
// /proc/interrupts and /proc/net/softnet_stat in the layout of the
// 82576-minipcie-x1 snapshot's (kernel 6.x), widened to ncpu columns with
// made-up counts.
func wideRoot(t testing.TB, ncpu int) string {
	t.Helper()
	dir := t.TempDir()
	var stat, soft, ints, net strings.Builder
	stat.WriteString("cpu  102500 241 41400 17666100 4217 0 190000 0 0 0\n")
	soft.WriteString("          ")
	ints.WriteString("      ")
	for c := range ncpu {
		fmt.Fprintf(&stat, "cpu%d 52000 120 21000 8831000 2100 0 96000 0 0 0\n", c)
		fmt.Fprintf(&soft, "  CPU%-8d", c)
		fmt.Fprintf(&ints, "CPU%-8d", c)
		fmt.Fprintf(&net, "003fc885 00000000 0000071e 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 %08x\n", c)
	}
	stat.WriteString("intr 0\nctxt 81234567\nbtime 1715680000\n")
	soft.WriteString("\n")
	ints.WriteString("\n")
	for _, name := range []string{"HI", "TIMER", "NET_TX", "NET_RX"} {
		fmt.Fprintf(&soft, "%12s:", name)
		for range ncpu {
			soft.WriteString("     300000")
		}
		soft.WriteString("\n")
	}
	for irq := range 8 {
		fmt.Fprintf(&ints, "%3d: ", 24+irq)
		for range ncpu {
			ints.WriteString("      1000 ")
		}
		fmt.Fprintf(&ints, " PCI-MSIX-0000:01:00.0  %d-edge      eth0-TxRx-%d\n", irq, irq)
	}
	for name, body := range map[string]string{"proc/stat": stat.String(), "proc/softirqs": soft.String(),
		"proc/interrupts": ints.String(), "proc/net/softnet_stat": net.String()} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestRunMemoryFlat: a run at the shortest interval on a 64-CPU host
// keeps no sample: between its 100th and 700th sample (each about 12 KB
// as an irq.Sample) the live heap grows by less than 1 MiB. A run that
// kept its samples grew by about 7 MiB here.
func TestRunMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("samples for several seconds")
	}
	root := wideRoot(t, 64)
	ctx := context.Background()
	run, err := Start(ctx, nil, option.Root(root), WithInterval(MinInterval))
	if err != nil {
		t.Fatal(err)
	}
	defer run.Stop()
	const warm, n = 100, 700
	var before uint64
	for i := 1; i <= n; i++ {
		if _, err := run.Next(ctx); err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		if i == warm {
			before = heapInUse()
		}
	}
	after := heapInUse()
	res, err := run.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Samples < n || len(res.Summary.CPUs) != 64 {
		t.Fatalf("summary of %d samples, %d CPUs", res.Summary.Samples, len(res.Summary.CPUs))
	}
	growth := int64(after) - int64(before)
	t.Logf("live heap %d KiB after %d samples, %d KiB after %d: %+d KiB", before>>10, warm, after>>10, n, growth>>10)
	if growth > 1<<20 {
		t.Errorf("the heap grew %d KiB over %d samples: the run keeps what it sampled", growth>>10, n-warm)
	}
}
