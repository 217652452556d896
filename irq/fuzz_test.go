package irq

import (
	"os"
	"slices"
	"testing"
)

func FuzzParseInterrupts(f *testing.F) {
	for _, p := range []string{"testdata/iwlwifi-interrupts.txt", "testdata/virtio4-interrupts.txt", "testdata/vm-2cpu-6.18-interrupts.txt"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(offlineCPU))
	f.Add([]byte("CPU0\n0: 1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		x := new(Interrupts)
		err := ParseInterrupts(b, x)
		if err != nil {
			if len(x.Lines) != 0 {
				t.Fatalf("error %v but %d rows kept", err, len(x.Lines))
			}
			return
		}
		if len(x.CPUs) == 0 || !slices.IsSorted(x.CPUs) {
			t.Fatalf("CPUs %v", x.CPUs)
		}
		if len(x.counts) != len(x.Lines)*len(x.CPUs) {
			t.Fatalf("%d counts for %d rows × %d CPUs", len(x.counts), len(x.Lines), len(x.CPUs))
		}
		for i, l := range x.Lines {
			if l.Columns < 1 || l.Columns > len(x.CPUs) {
				t.Fatalf("row %d has %d columns", i, l.Columns)
			}
			if l.IRQ >= 0 && x.Index(l.IRQ) < 0 {
				t.Fatalf("Index(%d) misses row %d", l.IRQ, i)
			}
		}
		// Parsing again into the same value gives the same result.
		y := *x
		y.Lines = slices.Clone(x.Lines)
		y.counts = slices.Clone(x.counts)
		if err := ParseInterrupts(b, x); err != nil {
			t.Fatalf("second parse: %v", err)
		}
		if !slices.Equal(x.Lines, y.Lines) || !slices.Equal(x.counts, y.counts) {
			t.Fatal("reparse differs")
		}
	})
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-3,8,10-11", "1", "", "0-1,", "3-1", "0-65535"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil {
			return
		}
		if !slices.IsSorted(cpus) || len(slices.Compact(slices.Clone(cpus))) != len(cpus) {
			t.Fatalf("%q → unsorted or duplicate %v", s, cpus)
		}
		back, err := ParseCPUList(FormatCPUList(cpus))
		if err != nil || !slices.Equal(back, cpus) {
			t.Fatalf("%q → %v → %q → %v, %v", s, cpus, FormatCPUList(cpus), back, err)
		}
	})
}

func FuzzParseCPUMask(f *testing.F) {
	for _, s := range []string{"ff", "00000000,0000000f", "0", "", "f,", "xyz", "8000000000000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := parseCPUMask(s)
		if err != nil {
			return
		}
		if !slices.IsSorted(cpus) {
			t.Fatalf("%q → unsorted %v", s, cpus)
		}
		for _, c := range cpus {
			if c < 0 || c >= maxCPU {
				t.Fatalf("%q → CPU %d", s, c)
			}
		}
	})
}
