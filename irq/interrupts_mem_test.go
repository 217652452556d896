package irq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// A 4096-CPU host with 1340 MSI-X vectors: a /proc/interrupts of 60 MB.
const (
	bigCPUs = 4096
	bigIRQs = 1340
)

// TestInterruptsMemoryBound reads the 60 MB /proc/interrupts of a
// 4096-CPU host in a child process (so that its peak resident memory,
// VmHWM, is its own) with ReadInterrupts and with a sampler of one NIC of
// 16 queues. ReadInterrupts keeps every count (8 bytes each, 43 MiB here)
// and must allocate little more than that; the sampler keeps its NIC's
// rows only. Before the file was read in chunks, ReadInterrupts allocated
// 248 MiB (VmHWM 233 MiB) and the sampler 564 MiB (285 MiB).
func TestInterruptsMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 60 MB file")
	}
	root := t.TempDir()
	writeBigHost(t, root)
	fi, err := os.Stat(filepath.Join(root, "proc", "interrupts"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 60e6 {
		t.Fatalf("generated %d bytes", fi.Size())
	}
	kept := int64(bigCPUs) * int64(bigIRQs+8) * 8 // every row's counts
	for _, c := range []struct {
		mode             string
		maxAlloc, maxHWM int64
	}{
		{"read", kept + 8<<20, kept + 48<<20},
		{"sampler", 16 << 20, 48 << 20},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptsMemoryChild$", "-test.v")
		cmd.Env = append(os.Environ(), "NICDIAG_IRQ_MEM="+c.mode+":"+root)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.mode, err, out)
		}
		var alloc, hwm int64
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) == 4 && f[0] == "memory:" {
				alloc, _ = strconv.ParseInt(f[1], 10, 64)
				hwm, _ = strconv.ParseInt(f[3], 10, 64)
			}
		}
		if alloc == 0 || hwm == 0 {
			t.Fatalf("%s: no measurement in\n%s", c.mode, out)
		}
		t.Logf("%s: allocated %.1f MiB, VmHWM %.1f MiB (file %.1f MB, counts %.1f MiB)", c.mode,
			float64(alloc)/(1<<20), float64(hwm)/(1<<20), float64(fi.Size())/1e6, float64(kept)/(1<<20))
		if raceEnabled {
			c.maxHWM *= 8 // the race detector's shadow memory
		}
		if alloc > c.maxAlloc || hwm > c.maxHWM {
			t.Errorf("%s: allocated %d bytes (bound %d), VmHWM %d bytes (bound %d)", c.mode, alloc, c.maxAlloc, hwm, c.maxHWM)
		}
	}
}

// TestInterruptsMemoryChild is TestInterruptsMemoryBound's child: it reads
// the host of NICDIAG_IRQ_MEM ("read:ROOT" or "sampler:ROOT") and prints
// "memory: ALLOCATED hwm: VMHWM", in bytes.
func TestInterruptsMemoryChild(t *testing.T) {
	mode, root, ok := strings.Cut(os.Getenv("NICDIAG_IRQ_MEM"), ":")
	if !ok {
		t.Skip("run by TestInterruptsMemoryBound")
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	ctx := context.Background()
	switch mode {
	case "read":
		x, err := ReadInterrupts(ctx, option.Root(root))
		if err != nil {
			t.Fatal(err)
		}
		if len(x.CPUs) != bigCPUs || len(x.Lines) < bigIRQs || x.Counts(bigIRQs)[bigCPUs-1] != genCount(bigIRQs-3, bigCPUs-1) {
			t.Fatalf("%d CPUs, %d rows", len(x.CPUs), len(x.Lines))
		}
		runtime.KeepAlive(x)
	case "sampler":
		now := time.Unix(1000, 0)
		s, err := NewSampler(ctx, []nicinfo.NIC{{Name: "eth3"}}, option.Root(root),
			withClock(func() time.Time { now = now.Add(time.Second); return now }))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for range 3 {
			x, err := s.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(x.NICs) != 1 || len(x.NICs[0].Queues) != 16 || len(x.CPUs) != bigCPUs {
				t.Fatalf("%d NICs, %d CPUs", len(x.NICs), len(x.CPUs))
			}
		}
	}
	runtime.ReadMemStats(&m1)
	fmt.Printf("memory: %d hwm: %d\n", m1.TotalAlloc-m0.TotalAlloc, vmHWM(t))
}

// vmHWM is this process's peak resident memory in bytes.
func vmHWM(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// writeBigHost writes under root the /proc of a bigCPUs host: its 60 MB
// /proc/interrupts (genInterrupts), /proc/stat, /proc/softirqs and
// /proc/net/softnet_stat.
func writeBigHost(t *testing.T, root string) {
	t.Helper()
	for name, b := range map[string][]byte{
		"proc/interrupts":       genInterrupts(bigCPUs, bigIRQs),
		"proc/stat":             genStat(bigCPUs, 64),
		"proc/softirqs":         genSoftirqs(bigCPUs),
		"proc/net/softnet_stat": genSoftnet(bigCPUs),
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInterruptsTooLarge: a file beyond a parse's caps is refused with an
// error wrapping ErrTooLarge, not truncated, and not read on without
// bound: a line over 1 MiB (read from a file in chunks), over 2^18 rows,
// over the counts a parse keeps (the cap lowered for the test).
func TestInterruptsTooLarge(t *testing.T) {
	root := t.TempDir()
	var hdr bytes.Buffer
	for c := 0; hdr.Len() <= maxLine; c++ {
		fmt.Fprintf(&hdr, " CPU%d", c)
	}
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc", "interrupts"), append(hdr.Bytes(), "\n  0: 1\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadInterrupts(context.Background(), option.Root(root)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a %d-byte line: %v", hdr.Len(), err)
	}

	var rows bytes.Buffer
	rows.WriteString("CPU0\n")
	for i := 0; i <= maxRows; i++ {
		fmt.Fprintf(&rows, "%d: 0\n", i)
	}
	x := new(Interrupts)
	if err := ParseInterrupts(rows.Bytes(), x); !errors.Is(err, ErrTooLarge) || len(x.Lines) != 0 {
		t.Errorf("%d rows: %v, %d rows kept", maxRows+1, err, len(x.Lines))
	}

	b := genInterrupts(8, 40)
	lr := lineReader{buf: b, w: len(b), eof: true, limit: 8 * 20}
	if err := parseInterrupts(&lr, x, keepAll, nil, nil); !errors.Is(err, ErrTooLarge) || len(x.Lines) != 0 {
		t.Errorf("over 20 rows of 8 counts: %v, %d rows kept", err, len(x.Lines))
	}
	if err := ParseInterrupts(b, x); err != nil || len(x.Lines) < 40 {
		t.Errorf("under the cap: %v, %d rows", err, len(x.Lines))
	}
}
