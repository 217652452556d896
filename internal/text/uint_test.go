package text

import (
	"strconv"
	"testing"
)

func TestUint(t *testing.T) {
	for _, s := range []string{"0", "7", "18446744073709551615", "00012"} {
		want, _ := strconv.ParseUint(s, 10, 64)
		if got, ok := Uint([]byte(s)); !ok || got != want {
			t.Errorf("Uint(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "-1", "+1", " 1", "1 ", "0x10", "18446744073709551616", "99999999999999999999", "123456789012345678901", "1.5"} {
		if v, ok := Uint([]byte(s)); ok {
			t.Errorf("Uint(%q) = %d, accepted", s, v)
		}
	}
}

func FuzzUint(f *testing.F) {
	for _, s := range []string{"0", "18446744073709551615", "18446744073709551616", "-1", "", "000000000000000000000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := Uint([]byte(s))
		want, err := strconv.ParseUint(s, 10, 64)
		// Uint takes at most 20 digits (2^64-1 has 20): longer runs of
		// leading zeros, which strconv accepts, never come from the kernel.
		plain := len(s) > 0 && len(s) <= 20
		for _, c := range s {
			plain = plain && c >= '0' && c <= '9'
		}
		if ok != (err == nil && plain) || ok && got != want {
			t.Fatalf("Uint(%q) = %d, %v; strconv %d, %v", s, got, ok, want, err)
		}
	})
}
