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
		if x.counts.n != len(x.Lines) || x.rowOff != nil {
			t.Fatalf("%d rows of counts for %d rows", x.counts.n, len(x.Lines))
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
		lines := slices.Clone(x.Lines)
		var counts [][]uint64
		for i := range x.Lines {
			counts = append(counts, slices.Clone(x.Counts(i)))
		}
		if err := ParseInterrupts(b, x); err != nil {
			t.Fatalf("second parse: %v", err)
		}
		if !slices.Equal(x.Lines, lines) {
			t.Fatal("reparse differs")
		}
		for i := range x.Lines {
			if !slices.Equal(x.Counts(i), counts[i]) {
				t.Fatalf("reparse: row %d counts differ", i)
			}
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

func FuzzParsePauseStats(f *testing.F) {
	tx := nlAttr(ethtoolAPauseStatTxFrames, u64Bytes(7))
	rx := nlAttr(ethtoolAPauseStatRxFrames, u64Bytes(9))
	f.Add(pauseReply(tx, rx))
	f.Add(pauseReply(nlAttr(ethtoolAPauseStatPad, nil), rx))
	f.Add(pauseReply([]byte{}))
	f.Add(pauseReply())
	f.Add([]byte{ethtoolMsgPauseGetReply, 1, 0, 0, 8, 0, ethtoolAPauseStats, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePauseStats(b)
		if err != nil {
			if p != (pauseCounts{}) {
				t.Fatalf("error %v with counts %+v", err, p)
			}
			return
		}
		if !p.HasTX && p.TX != 0 || !p.HasRX && p.RX != 0 {
			t.Fatalf("unreported counter set: %+v", p)
		}
		m := lossCounters{}
		p.losses(m)
		n := 0
		for name, c := range m {
			n++
			if (name == lossEthtoolNL+"tx_pause_frames") != (c.Class == LossPauseTX) {
				t.Fatalf("%s class %v", name, c.Class)
			}
		}
		if want := btoi(p.HasTX) + btoi(p.HasRX); n != want {
			t.Fatalf("%d entries for %+v", n, p)
		}
		// Parsing is deterministic.
		if q, err := parsePauseStats(b); err != nil || q != p {
			t.Fatalf("reparse: %+v, %v; want %+v", q, err, p)
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
