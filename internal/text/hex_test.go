package text

import (
	"strconv"
	"testing"
)

func TestHex(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"1f", 31, true}, {"DeadBeef", 0xdeadbeef, true},
		{"ffffffffffffffff", 1<<64 - 1, true}, {"00000000000000000000001", 1, true},
		{"10000000000000000", 0, false}, {"", 0, false}, {"0x1", 0, false}, {"-1", 0, false}, {"1 ", 0, false}, {"g", 0, false},
	} {
		if got, ok := Hex([]byte(c.in)); got != c.want || ok != c.ok {
			t.Errorf("Hex(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// FuzzHex holds Hex to strconv.ParseUint(s, 16, 64) over digits alone.
func FuzzHex(f *testing.F) {
	for _, s := range []string{"0", "ffffffffffffffff", "10000000000000000", "0x1", "+1", "", "00a_b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := Hex([]byte(s))
		want, err := strconv.ParseUint(s, 16, 64)
		digits := len(s) > 0
		for i := 0; i < len(s); i++ {
			if _, d := HexDigit(s[i]); !d {
				digits = false
			}
		}
		if wantOK := err == nil && digits; ok != wantOK || ok && got != want {
			t.Errorf("Hex(%q) = %d, %v; strconv: %d, %v", s, got, ok, want, err)
		}
	})
}
