package irq

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/nicdiag/nicdiag/internal/text"
)

// FuzzInterruptsStreamed reads the same bytes three ways and wants one
// answer: whole (ParseInterrupts), streamed in chunks of a few bytes (as a
// file is read), and as a sampler does, the layout first and then, against
// it, only the counts of the rows seed picks. A malformed file is the same
// error each way, never a panic.
func FuzzInterruptsStreamed(f *testing.F) {
	for _, p := range []string{"testdata/iwlwifi-interrupts.txt", "testdata/virtio4-interrupts.txt", "testdata/vm-2cpu-6.18-interrupts.txt"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(7), uint64(1))
	}
	f.Add(genInterrupts(4, 40), uint8(1), uint64(2))
	f.Add([]byte(offlineCPU), uint8(13), uint64(3))
	f.Add([]byte("CPU0\n0: 1"), uint8(0), uint64(4))
	f.Add([]byte("  CPU0  CPU1\n  5:   7   8  IO-APIC 2-edge t\n  6:   9"), uint8(3), uint64(5))
	f.Add([]byte(""), uint8(2), uint64(6))
	f.Add([]byte("CPU0\n\n\n 1: 99999999999999999999999 x\n"), uint8(5), uint64(7))
	f.Fuzz(func(t *testing.T, b []byte, step uint8, seed uint64) {
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(l) >= maxLine {
				t.Skip("a line over the streamed cap")
			}
		}
		n := int(step%64) + 1
		at := func(p []byte, off int64) (int, error) {
			if off >= int64(len(b)) {
				return 0, nil
			}
			return copy(p[:min(len(p), n)], b[off:]), nil
		}
		whole := new(Interrupts)
		werr := ParseInterrupts(b, whole)
		streamed := new(Interrupts)
		serr := parseInterrupts(&lineReader{at: at, size: 16}, streamed, keepAll, nil, nil)
		if (werr == nil) != (serr == nil) || werr != nil && werr.Error() != serr.Error() {
			t.Fatalf("whole: %v; streamed: %v", werr, serr)
		}
		if werr != nil {
			var pe *ParseError
			if !errors.As(werr, &pe) && !errors.Is(werr, ErrTooLarge) {
				t.Fatalf("error %v is neither a ParseError nor ErrTooLarge", werr)
			}
			if len(streamed.Lines) != 0 {
				t.Fatalf("error %v but %d rows kept", serr, len(streamed.Lines))
			}
			return
		}
		if !slices.Equal(whole.CPUs, streamed.CPUs) || !slices.Equal(whole.Lines, streamed.Lines) {
			t.Fatal("streamed rows differ")
		}
		for i := range whole.Lines {
			if !slices.Equal(whole.Counts(i), streamed.Counts(i)) {
				t.Fatalf("row %d: streamed counts %v, whole %v", i, streamed.Counts(i), whole.Counts(i))
			}
		}
		againstLayout(t, b, at, whole, seed)
	})
}

// againstLayout parses b's layout, then, against it, only the counts of
// the rows seed picks, read through at, twice (the second parse reuses the
// first's storage): the rows are whole's, and a row has counts if and only
// if it was picked.
func againstLayout(t *testing.T, b []byte, at func([]byte, int64) (int, error), whole *Interrupts, seed uint64) {
	t.Helper()
	layout := new(Interrupts)
	if err := parseInterrupts(&lineReader{buf: b, w: len(b), eof: true}, layout, keepNone, nil, nil); err != nil {
		t.Fatalf("layout: %v", err)
	}
	if !slices.Equal(layout.Lines, whole.Lines) {
		t.Fatal("layout rows differ")
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	keep := make([]bool, len(layout.Lines))
	for i := range keep {
		keep[i] = rng.IntN(3) == 0
	}
	for range 2 { // the second parse reuses the first's storage
		kept := new(Interrupts)
		if err := parseInterrupts(&lineReader{at: at, size: 16}, kept, keepSome, layout, keep); err != nil {
			t.Fatalf("against its own layout: %v", err)
		}
		if !slices.Equal(kept.Lines, whole.Lines) {
			t.Fatal("rows against the layout differ")
		}
		for i := range keep {
			switch c := kept.Counts(i); {
			case keep[i] && !slices.Equal(c, whole.Counts(i)):
				t.Fatalf("kept row %d: %v, whole %v", i, c, whole.Counts(i))
			case !keep[i] && c != nil:
				t.Fatalf("row %d not kept has counts %v", i, c)
			}
		}
	}
}

// FuzzProcStat parses /proc/stat, /proc/softirqs and softnet_stat with
// this package's parsers and with their map-keyed versions as they were
// before the slices (statMap, softirqsMap, softnetMap below): the same
// values by CPU, ascending, or the same error.
func FuzzProcStat(f *testing.F) {
	f.Add(genStat(3, 10), genSoftirqs(3), genSoftnet(3))
	f.Add([]byte("cpu  1 2 3 4\ncpu0 1 2 3 4\ncpu1 5 6 7 8 9 10 11\nintr 1\n"), []byte("   CPU0  CPU1\n  NET_RX: 1 2\n  NET_TX: 1 2\n"),
		[]byte("00000001 00000002 00000003 00000000 00000000 00000000 00000000 00000000 00000004\n"))
	f.Add([]byte("cpu0 1\ncpu3\ncpu0 7 0 0 0 0 9\n"), []byte("CPU1 CPU0\n"), []byte("0 0 0 0 0 0 0 0 0 0 0 0 3\n0 0 0 0 0 0 0 0 1 0 0 0 3\n"))
	f.Add([]byte("cpuX 1\n"), []byte(""), []byte("0 0 0 0 0 0 0 0\n"))
	f.Fuzz(func(t *testing.T, stat, soft, net []byte) {
		st, acc, err := parseStat(stat, nil)
		wst, wacc, werr := statMap(stat)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("stat: %v, map version %v", err, werr)
		}
		if err == nil {
			if acc != wacc || len(st) != len(wst) || !isSortedBy(st, func(c cpuStat) int { return c.cpu }) {
				t.Fatalf("stat: %d CPUs accounted %v, map version %d %v", len(st), acc, len(wst), wacc)
			}
			for _, c := range st {
				if w, ok := wst[c.cpu]; !ok || w != c.cpuTimes {
					t.Fatalf("stat cpu%d: %+v, map version %+v", c.cpu, c.cpuTimes, w)
				}
			}
		}

		var n netSoftirqs
		err = parseSoftirqs(soft, &n)
		wrx, wtx, werr := softirqsMap(soft)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("softirqs: %v, map version %v", err, werr)
		}
		if err != nil && (len(n.cpus) != 0 || len(n.rx) != 0) {
			t.Fatalf("softirqs error %v with %d columns", err, len(n.rx))
		}
		for cpu, w := range wrx {
			if rx, tx, ok := n.at(cpu); !ok || rx != w || tx != wtx[cpu] {
				t.Fatalf("softirqs CPU%d: %d %d, map version %d %d", cpu, rx, tx, w, wtx[cpu])
			}
		}
		if err == nil && len(n.cpus) != len(wrx) {
			t.Fatalf("softirqs: %d columns, map version %d", len(n.cpus), len(wrx))
		}

		sn, err := parseSoftnet(net, st, nil)
		wsn, werr := softnetMap(net, st)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("softnet: %v, map version %v", err, werr)
		}
		if err == nil && (len(sn) != len(wsn) || !isSortedBy(sn, func(c cpuSoftnet) int { return c.cpu })) {
			t.Fatalf("softnet: %d CPUs, map version %d", len(sn), len(wsn))
		}
		for _, c := range sn {
			if wsn[c.cpu] != c.softnet {
				t.Fatalf("softnet cpu %d: %+v, map version %+v", c.cpu, c.softnet, wsn[c.cpu])
			}
		}
	})
}

// statMap is parseStat as it was, into a map: the oracle of FuzzProcStat.
func statMap(b []byte) (map[int]cpuTimes, bool, error) {
	dst := map[int]cpuTimes{}
	var acc bool
	for line := 1; len(b) > 0; line++ {
		var l []byte
		l, b = cutLine(b)
		name, i := nextField(l, 0)
		if len(name) <= 3 || !bytes.HasPrefix(name, []byte("cpu")) {
			continue
		}
		id, ok := decimalInt(name[3:])
		if !ok {
			return nil, false, &ParseError{File: statFile, Line: line, Err: errf("%q is not cpuN", clip(name))}
		}
		var v [10]float64
		n := 0
		for ; n < len(v); n++ {
			var tok []byte
			if tok, i = nextField(l, i); len(tok) == 0 {
				break
			}
			x, ok := text.Uint(tok)
			if !ok {
				return nil, false, &ParseError{File: statFile, Line: line, Err: errf("field %d: %q is not a count", n+2, clip(tok))}
			}
			v[n] = float64(x) / userHZ
		}
		if n == 0 {
			continue
		}
		user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		dst[id] = cpuTimes{total: user + nice + system + idle + iowait + irq + softirq + steal, user: user + nice,
			system: system, idle: idle, iowait: iowait, steal: steal, irq: irq, softirq: softirq}
		if irq > 0 {
			acc = true
		}
	}
	return dst, acc, nil
}

// softirqsMap is parseSoftirqs as it was, into maps.
func softirqsMap(b []byte) (rx, tx map[int]uint64, err error) {
	rx, tx = map[int]uint64{}, map[int]uint64{}
	h, b := cutLine(b)
	ids, err := parseCPUHeader(h, nil)
	if err != nil {
		return nil, nil, &ParseError{File: softirqsFile, Line: 1, Err: err}
	}
	nrx, ntx := 0, 0
	for line := 2; len(b) > 0; line++ {
		var l []byte
		l, b = cutLine(b)
		name, i := nextField(l, 0)
		var m map[int]uint64
		var n *int
		switch string(name) {
		case "NET_RX:":
			m, n = rx, &nrx
		case "NET_TX:":
			m, n = tx, &ntx
		default:
			continue
		}
		*n = 0
		clear(m)
		for {
			var tok []byte
			if tok, i = nextField(l, i); len(tok) == 0 {
				break
			}
			v, ok := text.Uint(tok)
			if !ok {
				return nil, nil, &ParseError{File: softirqsFile, Line: line, Err: errf("column %d: %q is not a count", *n+1, clip(tok))}
			}
			if *n < len(ids) {
				m[ids[*n]] = v
			}
			*n++
		}
	}
	if nrx != len(ids) || ntx != len(ids) {
		return nil, nil, &ParseError{File: softirqsFile, Err: errf("%d NET_RX and %d NET_TX columns under %d CPU headers", nrx, ntx, len(ids))}
	}
	return rx, tx, nil
}

// softnetMap is parseSoftnet as it was, into a map.
func softnetMap(b []byte, stat []cpuStat) (map[int]softnet, error) {
	dst := map[int]softnet{}
	for line := 1; len(b) > 0; line++ {
		var l []byte
		l, b = cutLine(b)
		var col [13]uint32
		w := 0
		for i := 0; ; w++ {
			var tok []byte
			if tok, i = nextField(l, i); len(tok) == 0 {
				break
			}
			if w < len(col) {
				v, ok := hex32(tok)
				if !ok {
					return nil, &ParseError{File: softnetFile, Line: line, Err: errf("column %d: %q is not a hex count", w+1, clip(tok))}
				}
				col[w] = v
			}
		}
		if w < 9 {
			return nil, &ParseError{File: softnetFile, Line: line, Err: errf("%d columns, want at least 9", w)}
		}
		id := line - 1
		if w >= 13 {
			id = int(col[12])
		} else if line-1 < len(stat) {
			id = stat[line-1].cpu
		}
		dst[id] = softnet{col[0], col[1], col[2]}
	}
	return dst, nil
}
