package procs

import "testing"

// Lines of this machine's /proc/PID/stat (Linux 6.18): a process and a
// kernel thread, with fields 14/15 (utime, stime), 20 (threads) and 39
// (processor) set by hand to tell them apart.
func TestParseStat(t *testing.T) {
	s, ok := ParseStat(25932, []byte("25932 (c a)t) R 25930 25930 10640 0 -1 4194304 100 0 0 0 17 23 0 0 20 0 3 0 81383 3133440 390 18446744073709551615 94862802796544 94862802816425 140730731971056 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94862802832432 94862802834048 94863753969664 140730731977215 140730731977235 140730731977235 140730731978731 0\n"))
	if !ok || string(s.Comm) != "c a)t" || s.PPID != 25930 || s.State != 'R' || s.UTime != 17 || s.STime != 23 ||
		s.Threads != 3 || s.Start != 81383 || s.CPU != 1 || s.Flags&PFKthread != 0 {
		t.Errorf("%+v %v", s, ok)
	}
	k, ok := ParseStat(2, []byte("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 17 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0"))
	if !ok || k.Flags&PFKthread == 0 || k.CPU != 1 || string(k.Comm) != "kthreadd" {
		t.Errorf("%+v %v", k, ok)
	}
	// The 20 fields Parse needs, no processor: CPU is -1.
	short, ok := ParseStat(9, []byte("9 (x) S 1 9 9 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 77"))
	if !ok || short.CPU != -1 || short.Start != 77 || short.UTime != 5 {
		t.Errorf("%+v %v", short, ok)
	}
	for _, bad := range []string{"", "9 (x", "9 x) S 1", ") (", "9 (x) SS 1 9 9 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 77",
		"9 (x) S z 9 9 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 77", "9 (x) S 1 9 9 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0"} {
		if s, ok := ParseStat(9, []byte(bad)); ok {
			t.Errorf("%q parsed: %+v", bad, s)
		}
	}
}

// FuzzParseStat: any input is refused or parsed, never a panic; what
// parses agrees with Parse.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 17 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 1 0"))
	f.Add([]byte("1 ((()) S 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, ok := ParseStat(1, b)
		p, pok := Parse(1, b)
		if ok != pok || (ok && s.Proc != p) {
			t.Fatalf("ParseStat %+v %v, Parse %+v %v", s, ok, p, pok)
		}
	})
}
