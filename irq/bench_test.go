package irq

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
	for _, size := range [][2]int{{128, 1000}, {256, 2048}} {
		root := procRoot(b, size[0], size[1])
		name := fmt.Sprintf("%dcpu-%dirq", size[0], size[1])
		b.Run("nicdiag/"+name, func(b *testing.B) {
			o := newOptions([]Option{WithRoot(root)})
			x := new(Interrupts)
			buf, _ := o.root.ReadFile(interruptsFile)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				f, err := os.Open(o.root.Path(interruptsFile))
				if err != nil {
					b.Fatal(err)
				}
				n, _ := readFull(f, &buf)
				f.Close()
				if err := ParseInterrupts(buf[:n], x); err != nil {
					b.Fatal(err)
				}
			}
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
			for b.Loop() {
				if _, err := p.Interrupts(); err != nil {
					b.Fatal(err)
				}
			}
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

// readFull reads f into *buf, growing it as needed, and returns the length.
func readFull(f *os.File, buf *[]byte) (int, error) {
	n := 0
	for {
		if n == len(*buf) {
			*buf = append(*buf, make([]byte, len(*buf)+4096)...)
		}
		m, err := f.Read((*buf)[n:])
		n += m
		if err != nil || m == 0 {
			return n, nil
		}
	}
}
