package pcie

import (
	"bufio"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/option"
)

func TestParseSpeed(t *testing.T) {
	ok := []struct {
		in   string
		want float64
	}{
		{"8.0 GT/s PCIe", 8},
		{"2.5 GT/s PCIe\n", 2.5},
		{"16.0 GT/s PCIe", 16},
		{"32.0 GT/s PCIe", 32},
		{"64.0 GT/s PCIe", 64},
		{"8 GT/s", 8}, // kernels before 4.17
		{"5 GT/s", 5}, // kernels before 4.17
		{"2.5 GT/s", 2.5},
		{"5.0 GT/s", 5},
	}
	for _, c := range ok {
		got, err := ParseSpeed(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSpeed(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"Unknown", "Unknown speed", "Unknown\n"} {
		if v, err := ParseSpeed(in); !errors.Is(err, ErrUnknownSpeed) || v != 0 {
			t.Errorf("ParseSpeed(%q) = %v, %v; want 0, ErrUnknownSpeed", in, v, err)
		}
	}
	for _, in := range []string{"", "GT/s", "8.0", "8.0 GB/s", "-8 GT/s", "0 GT/s", "1e1 GT/s", "0x8 GT/s",
		"Inf GT/s", "NaN GT/s", ". GT/s", "8. GT/s", "8..0 GT/s", "99999 GT/s", "8.0 GT/s PCIe PCIe", "8_0 GT/s"} {
		if _, err := ParseSpeed(in); !errors.Is(err, ErrBadSpeed) {
			t.Errorf("ParseSpeed(%q) err = %v; want ErrBadSpeed", in, err)
		}
	}
}

func TestParseWidth(t *testing.T) {
	for in, want := range map[string]int{"4": 4, "0": 0, "16\n": 16, "x8": 8, "32": 32, "63": 63} {
		if got, err := ParseWidth(in); err != nil || got != want {
			t.Errorf("ParseWidth(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "64", "255", "4 lanes", "x", "0x4", "١"} {
		if _, err := ParseWidth(in); !errors.Is(err, ErrBadWidth) {
			t.Errorf("ParseWidth(%q) err = %v; want ErrBadWidth", in, err)
		}
	}
}

// TestReadLinkAttrsOldKernel builds the BCM5709 function from the hwloc
// dump: an old kernel that prints "2.5 GT/s" and has no max_link_* files.
func TestReadLinkAttrsOldKernel(t *testing.T) {
	const fn = "pci0000:00/0000:00:06.0/0000:03:00.1/"
	f, err := os.Open("testdata/bcm5709-old-kernel.sysfs")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " = ")
		if name, in := strings.CutPrefix(k, fn); ok && in && !strings.Contains(name, "/") {
			files[name] = v
		}
	}
	if files["current_link_speed"] == "" {
		t.Fatal("dump lost its link files")
	}
	tr := newTree(t)
	tr.add([]string{"pci0000:00", "0000:00:06.0"}, map[string]string{"class": "0x060400"}, nil)
	tr.add([]string{"pci0000:00", "0000:00:06.0", "0000:03:00.1"}, files, nil)
	la, err := ReadLinkAttrs(context.Background(), "0000:03:00.1", option.Root(tr.dir))
	if err != nil {
		t.Fatal(err)
	}
	if la.CurrentSpeed != 2.5 || la.CurrentWidth != 1 || la.MaxSpeed != 0 || la.MaxWidth != 0 {
		t.Errorf("got %+v", la)
	}
	for _, m := range []string{"max_link_speed: absent", "max_link_width: absent"} {
		if !slices.Contains(la.Missing, m) {
			t.Errorf("Missing %v lacks %q", la.Missing, m)
		}
	}
}

func TestReadLinkAttrsUnknownAndMalformed(t *testing.T) {
	tr := newTree(t)
	tr.add([]string{"pci0000:00", "0000:00:1c.0"}, map[string]string{
		"current_link_speed": "Unknown", "current_link_width": "0",
		"max_link_speed": "8.0 GT/s PCIe", "max_link_width": "lots",
	}, nil)
	la, err := ReadLinkAttrs(context.Background(), "0000:00:1c.0", option.Root(tr.dir))
	if err != nil {
		t.Fatal(err)
	}
	if la.CurrentSpeed != 0 || la.MaxSpeed != 8 || la.MaxWidth != 0 {
		t.Errorf("got %+v", la)
	}
	want := []string{"current_link_speed: Unknown", `max_link_width: malformed "lots"`}
	if !slices.Equal(la.Missing, want) {
		t.Errorf("Missing = %q, want %q", la.Missing, want)
	}
	if _, err := ReadLinkAttrs(context.Background(), "0000:09:00.0", option.Root(tr.dir)); !errors.Is(err, ErrNotFound) {
		t.Errorf("absent device: %v", err)
	}
	if _, err := ReadLinkAttrs(context.Background(), "../../etc", option.Root(tr.dir)); !errors.Is(err, ErrBadAddress) {
		t.Errorf("bad address: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadLinkAttrs(ctx, "0000:00:1c.0", option.Root(tr.dir)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestParseAddress(t *testing.T) {
	for s, want := range map[string]Address{
		"0000:01:00.0": "0000:01:00.0", "10000:e1:00.0": "10000:e1:00.0", "0000:00:1f.6": "0000:00:1f.6",
		"0000:00:1F.7": "0000:00:1f.7", "01:00.1": "0000:01:00.1", "E1:00.0": "0000:e1:00.0",
		"0000:00:20.0": "", "0000:00:1c.8": "", "000:01:00.0": "", "0000:01:00": "",
		"0000-01:00.0": "", "pci0000:00": "", "": "", "0000:0g:00.0": "", "1:00.0": "", "0000:01:00.0 ": "",
	} {
		got, err := ParseAddress(s)
		if got != want || (want == "") != errors.Is(err, ErrBadAddress) {
			t.Errorf("ParseAddress(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	if a, _ := ParseAddress("0000:01:00.3"); a.Slot() != "0000:01:00" || a.String() != "0000:01:00.3" {
		t.Errorf("Slot/String of %q: %q %q", a, a.Slot(), a.String())
	}
}

// TestFormatGTs: speeds print as lspci prints them, whichever sysfs
// spelling they were parsed from.
func TestFormatGTs(t *testing.T) {
	for in, want := range map[string]string{
		"2.5 GT/s PCIe": "2.5", "5.0 GT/s PCIe": "5", "5 GT/s": "5", "8.0 GT/s PCIe": "8",
		"16.0 GT/s PCIe": "16", "32.0 GT/s PCIe": "32", "64.0 GT/s PCIe": "64",
	} {
		v, err := ParseSpeed(in)
		if got := FormatGTs(v); err != nil || got != want {
			t.Errorf("FormatGTs(ParseSpeed(%q)) = %q, %v; want %q", in, got, err, want)
		}
	}
	if got := FormatGTs(0); got != "0" {
		t.Errorf("FormatGTs(0) = %q", got)
	}
}
