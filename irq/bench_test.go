package irq

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// procRoot writes a generated /proc/interrupts (see genInterrupts: a real
// 6.18 x86 layout widened to ncpu × nirq, synthetic counts) where both
// parsers find it: <root>/proc/interrupts, plus <root>/proc/1/ for procfs,
// whose Interrupts method hangs off a Proc.
func procRoot(b *testing.B, ncpu, nirq int) string {
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc", "1"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc", "interrupts"), genInterrupts(ncpu, nirq), 0o644); err != nil {
		b.Fatal(err)
	}
	return root
}

// BenchmarkInterrupts reads and parses one /proc/interrupts sample, with
// this package and with procfs, in the same run.
func BenchmarkInterrupts(b *testing.B) {
	// 128×600 is the largest of these under procfs's 1 MiB read limit; the
	// others are over it and procfs panics on them (reported as a skip).
	for _, size := range [][2]int{{128, 600}, {128, 1000}, {256, 2048}} {
		root := procRoot(b, size[0], size[1])
		name := fmt.Sprintf("%dcpu-%dirq", size[0], size[1])
		b.Run("nicdiag/"+name, func(b *testing.B) {
			o := newOptions([]Option{WithRoot(root)})
			x := new(Interrupts)
			buf, _ := o.root.ReadFile(interruptsFile)
			b.SetBytes(int64(len(buf)))
			sample := func() {
				var err error
				if buf, err = readInto(o.root.Path(interruptsFile), buf); err != nil {
					b.Fatal(err)
				}
				if err := ParseInterrupts(buf, x); err != nil {
					b.Fatal(err)
				}
			}
			sample() // the first parse sizes the buffers; then steady state
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				sample()
			}
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
			if len(x.Lines) < size[1] {
				b.Fatalf("%d rows", len(x.Lines))
			}
		})
		b.Run("procfs/"+name, func(b *testing.B) {
			fs, err := procfs.NewFS(filepath.Join(root, "proc"))
			if err != nil {
				b.Fatal(err)
			}
			p, err := fs.Proc(1)
			if err != nil {
				b.Fatal(err)
			}
			if err := procfsFails(p, size[1]); err != nil {
				b.Skipf("procfs cannot read this file: %v", err)
			}
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if _, err := p.Interrupts(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// procfsFails reports how procfs fails on a file: a panic (a row cut at its
// 1 MiB read limit) or missing rows.
func procfsFails(p procfs.Proc, nirq int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	m, err := p.Interrupts()
	if err != nil {
		return err
	}
	if len(m) < nirq {
		return fmt.Errorf("read %d of %d IRQ rows", len(m), nirq)
	}
	return nil
}

// cpuTime is the process's user+system CPU time: on a shared, loaded
// machine it shows the work done, where ns/op also counts waiting for a CPU.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
