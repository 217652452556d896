package irq

import (
	"errors"
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string][]int{
		"0-3,8,10-11": {0, 1, 2, 3, 8, 10, 11},
		"1\n":         {1},
		"":            nil,
		"3,1,1":       {1, 3},
	} {
		got, err := ParseCPUList(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"a", "3-1", "0-", "-1", "0-70000", ","} {
		if _, err := ParseCPUList(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseCPUList(%q) err = %v", bad, err)
		}
	}
	if got := FormatCPUList([]int{0, 1, 2, 5, 7, 8}); got != "0-2,5,7-8" {
		t.Errorf("FormatCPUList = %q", got)
	}
}

func TestParseCPUMask(t *testing.T) {
	for in, want := range map[string][]int{
		"f":                 {0, 1, 2, 3},
		"00000001,00000002": {1, 32},
		"0":                 nil,
		"A0":                {5, 7},
	} {
		got, err := parseCPUMask(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseCPUMask(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseCPUMask("0g"); !errors.Is(err, ErrMalformed) {
		t.Errorf("bad digit: %v", err)
	}
}
