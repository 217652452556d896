package pcie

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func FuzzDecodeConfig(f *testing.F) {
	for _, s := range []struct{ file, fn string }{
		{"82576-et-dual.lspci", "01:00.0"},
		{"connectx3pro-haswell.lspci", "00:02.0"},
		{"nvme-gen5-at-gen4.lspci", "2e:00.0"},
		{"virtio-net.lspci", "00:09.0"},
	} {
		b := readDumps(f, s.file)[s.fn].Config
		f.Add(b)
		f.Add(b[:64])
		f.Add(b[:min(len(b), 256)])
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeConfig(b)
		if err != nil {
			if c != nil {
				t.Fatal("config with error")
			}
			if !errors.Is(err, ErrConfigTruncated) && !errors.Is(err, ErrCapList) && !errors.Is(err, ErrNoDevice) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if c.Size != len(b) {
			t.Fatalf("size %d of %d", c.Size, len(b))
		}
		x := c.Express
		if x == nil {
			return
		}
		if x.Offset < 0x40 || x.Offset+0x14 > len(b) {
			t.Fatalf("express at 0x%x in %d bytes", x.Offset, len(b))
		}
		for _, v := range []int{x.MaxPayload, x.MaxPayloadSupported, x.MaxReadRequest} {
			if v < 128 || v > 16384 || v&(v-1) != 0 {
				t.Fatalf("size %d", v)
			}
		}
		if x.LinkWidth > 63 || x.LinkCapWidth > 63 || x.LinkSpeed > 128 || x.TargetSpeed > 128 {
			t.Fatalf("link %+v", x)
		}
	})
}

func FuzzParseSpeed(f *testing.F) {
	for _, s := range []string{"8.0 GT/s PCIe", "2.5 GT/s", "5 GT/s", "Unknown", "Unknown speed", "16.0 GT/s PCIe\n", "", "1e9 GT/s", "x GT/s PCIe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseSpeed(s)
		if err != nil {
			if v != 0 || !errors.Is(err, ErrBadSpeed) && !errors.Is(err, ErrUnknownSpeed) {
				t.Fatalf("%q: %v, %v", s, v, err)
			}
			return
		}
		if v <= 0 || v > 1024 || math.IsNaN(v) || !strings.Contains(s, " GT/s") {
			t.Fatalf("%q parsed to %v", s, v)
		}
	})
}

func FuzzParseWidth(f *testing.F) {
	for _, s := range []string{"4", "0", "x16", "16\n", "64", "-1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseWidth(s)
		if err != nil {
			if !errors.Is(err, ErrBadWidth) {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if v < 0 || v > 63 {
			t.Fatalf("%q parsed to %d", s, v)
		}
	})
}

func FuzzSplitChain(f *testing.F) {
	for _, s := range []string{
		"/sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0",
		"/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0",
		"/sys/devices/pci0000:00", "/sys/devices/virtual/net/lo", "/etc/passwd", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		base, chain, err := splitChain(s)
		if err != nil {
			return
		}
		if len(chain) == 0 || len(chain) > maxDepth || !strings.HasPrefix(base, "/sys/devices/") {
			t.Fatalf("%q: %q %q", s, base, chain)
		}
		for _, a := range chain {
			if !isAddress(a) || !strings.Contains(s, a) {
				t.Fatalf("%q: chain element %q", s, a)
			}
		}
	})
}

func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{
		"0000:01:00.0", "01:00.0", "0000:00:1C.0", "10000:e0:06.0", "ffffffff:ff:1f.7",
		"0000:01:20.0", "0000:01:00.8", "000:01:00.0", "0000:01:00.0/../x", "1:0.0", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress(s)
		if err != nil {
			if a != "" || !errors.Is(err, ErrBadAddress) {
				t.Fatalf("%q: %q, %v", s, a, err)
			}
			return
		}
		if !a.Valid() {
			t.Fatalf("%q parsed to %q, not canonical", s, a)
		}
		if b, err := ParseAddress(a.String()); err != nil || b != a {
			t.Fatalf("%q: %q reparses to %q, %v", s, a, b, err)
		}
	})
}
