package pcie

import (
	"errors"
	"slices"
	"testing"
)

// TestDecodeConfigMatchesLspci decodes the config bytes of real dumps and
// checks every field against what lspci printed from the same bytes.
func TestDecodeConfigMatchesLspci(t *testing.T) {
	cases := []struct{ file, fn string }{
		{"82576-et-dual.lspci", "01:00.0"},
		{"connectx3pro-haswell.lspci", "00:02.0"},
		{"connectx3pro-haswell.lspci", "03:00.0"},
		{"nvme-gen5-at-gen4.lspci", "2e:00.0"},
	}
	for _, tc := range cases {
		t.Run(tc.file+"/"+tc.fn, func(t *testing.T) {
			d := readDumps(t, tc.file)[tc.fn]
			if d == nil {
				t.Fatalf("no %s in %s", tc.fn, tc.file)
			}
			want := parseLspci(t, d.Text)
			c, err := DecodeConfig(d.Config)
			if err != nil {
				t.Fatal(err)
			}
			x := c.Express
			if x == nil {
				t.Fatal("no Express capability decoded")
			}
			checks := []struct {
				name      string
				got, want any
			}{
				{"version", x.Version, int(want.Version[0] - '0')},
				{"port type", x.PortType, lspciPortType[want.PortType]},
				{"DevCap MaxPayload", x.MaxPayloadSupported, want.DevCapMPS},
				{"DevCtl MaxPayload", x.MaxPayload, want.MPS},
				{"DevCtl MaxReadReq", x.MaxReadRequest, want.MRRS},
				{"LnkCap speed", x.LinkCapSpeed, want.CapSpeed},
				{"LnkCap width", x.LinkCapWidth, want.CapWidth},
				{"LnkCap ASPM", x.ASPMSupport.String(), want.CapASPM},
				{"LnkCtl ASPM", x.ASPMEnabled.String(), want.CtlASPM},
				{"LnkCtl RCB", x.RCB, want.RCB},
				{"LnkSta speed", x.LinkSpeed, want.StaSpeed},
				{"LnkSta width", x.LinkWidth, want.StaWidth},
				{"LnkCtl2 target", x.TargetSpeed, want.Target},
			}
			if want.HasCap2 && len(x.SupportedSpeeds) == 0 {
				t.Error("lspci prints LnkCap2, decoder found no vector")
			}
			// Older lspci versions do not print LnkCap2; a vector must then
			// still top out at the LnkCap speed.
			if n := len(x.SupportedSpeeds); n > 0 && x.SupportedSpeeds[n-1] != x.LinkCapSpeed {
				t.Errorf("LnkCap2 vector %v does not top out at LnkCap %v", x.SupportedSpeeds, x.LinkCapSpeed)
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %v, lspci says %v", c.name, c.got, c.want)
				}
			}
			if want.HasCap2 {
				if lo, hi := x.SupportedSpeeds[0], x.SupportedSpeeds[len(x.SupportedSpeeds)-1]; lo != want.Cap2Low || hi != want.Cap2High {
					t.Errorf("LnkCap2 %v..%v, lspci says %v..%v", lo, hi, want.Cap2Low, want.Cap2High)
				}
			}
			if want.StaDowngraded != (x.LinkSpeed < x.LinkCapSpeed) {
				t.Errorf("lspci downgraded=%v but LnkSta %v vs LnkCap %v", want.StaDowngraded, x.LinkSpeed, x.LinkCapSpeed)
			}
		})
	}
}

func TestDecodeConfigNVMeGen5(t *testing.T) {
	d := readDumps(t, "nvme-gen5-at-gen4.lspci")["2e:00.0"]
	c, err := DecodeConfig(d.Config)
	if err != nil {
		t.Fatal(err)
	}
	x := c.Express
	if !slices.Contains(x.SupportedSpeeds, 32) || x.LinkSpeed != 16 || x.LinkCapSpeed != 32 {
		t.Errorf("speeds %v, LnkSta %v, LnkCap %v; want vector with 32, 16, 32", x.SupportedSpeeds, x.LinkSpeed, x.LinkCapSpeed)
	}
	if !slices.IsSorted(x.SupportedSpeeds) {
		t.Errorf("vector not ascending: %v", x.SupportedSpeeds)
	}
}

func TestDecodeConfigHeaderOnly(t *testing.T) {
	full := readDumps(t, "82576-et-dual.lspci")["01:00.0"].Config
	c, err := DecodeConfig(full[:64])
	if err != nil {
		t.Fatal(err)
	}
	if c.CapsReadable || c.Express != nil || c.Note != notReadableNote {
		t.Errorf("64-byte view: readable=%v express=%v note=%q", c.CapsReadable, c.Express, c.Note)
	}
	if c.VendorID != 0x8086 || c.DeviceID != 0x10c9 || c.Class != 0x020000 {
		t.Errorf("header: %04x:%04x class %06x", c.VendorID, c.DeviceID, c.Class)
	}
	if c.Size != 64 {
		t.Errorf("size %d", c.Size)
	}
	// 256 bytes (what root gets on a device without extended space)
	// decodes the same Express capability as 4096.
	c256, err := DecodeConfig(full[:256])
	if err != nil {
		t.Fatal(err)
	}
	c4k, _ := DecodeConfig(full)
	if c256.Express.MaxPayload != c4k.Express.MaxPayload || c256.Express.LinkCapWidth != c4k.Express.LinkCapWidth {
		t.Errorf("256-byte and 4 KiB decodes differ")
	}
}

func TestDecodeConfigConventionalPCI(t *testing.T) {
	d := readDumps(t, "virtio-net.lspci")["00:09.0"]
	c, err := DecodeConfig(d.Config)
	if err != nil {
		t.Fatal(err)
	}
	if c.Express != nil || !c.CapsReadable || c.VendorID != 0x1af4 {
		t.Errorf("virtio: express=%v readable=%v vendor=%04x", c.Express, c.CapsReadable, c.VendorID)
	}
}

func TestDecodeConfigHostile(t *testing.T) {
	base := readDumps(t, "82576-et-dual.lspci")["01:00.0"].Config[:256]
	mod := func(f func(b []byte)) []byte {
		b := slices.Clone(base)
		f(b)
		return b
	}
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrConfigTruncated},
		{"63 bytes", base[:63], ErrConfigTruncated},
		{"all ones", mod(func(b []byte) {
			for i := range b {
				b[i] = 0xff
			}
		}), ErrNoDevice},
		{"loop", mod(func(b []byte) { b[0x41] = 0x40 }), ErrCapList},
		{"pointer into header", mod(func(b []byte) { b[0x34] = 0x20 }), ErrCapList},
		{"cap ID 0xff", mod(func(b []byte) { b[0x50] = 0xff }), ErrCapList},
		{"pointer past end", base[:0x80], ErrConfigTruncated},
		{"express cut short", mod(func(b []byte) { b[0x71] = 0xf0; b[0xf0] = 0x10; b[0xf1] = 0 })[:0xf8], ErrConfigTruncated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := DecodeConfig(tc.b)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if c != nil {
				t.Errorf("config returned with error: %+v", c)
			}
		})
	}
}

func TestDecodeConfigVersion1(t *testing.T) {
	// Version 1 capabilities have no LnkCap2/LnkCtl2: the fields stay 0.
	b := slices.Clone(readDumps(t, "82576-et-dual.lspci")["01:00.0"].Config[:256])
	b[0xa2] = 0x01
	c, err := DecodeConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Express.Version != 1 || c.Express.TargetSpeed != 0 || c.Express.SupportedSpeeds != nil {
		t.Errorf("v1: %+v", c.Express)
	}
}

func TestPortTypeAndASPMText(t *testing.T) {
	if PortRCiEP.String() != "rc_integrated_endpoint" || PortType(3).String() != "port_type_3" {
		t.Error(PortRCiEP.String(), PortType(3).String())
	}
	if (ASPML0s|ASPML1).String() != "L0s L1" || ASPM(0).String() != "none" {
		t.Error((ASPML0s | ASPML1).String(), ASPM(0).String())
	}
	if !PortRootPort.downFacing() || PortUpstream.downFacing() || PortEndpoint.downFacing() {
		t.Error("downFacing")
	}
}

func TestPortTypeAndASPMTextRoundTrip(t *testing.T) {
	for p := PortType(0); p < 12; p++ {
		b, _ := p.MarshalText()
		var back PortType
		if err := back.UnmarshalText(b); err != nil || back != p {
			t.Errorf("%v: round trip gave %v, %v", p, back, err)
		}
	}
	for a := ASPM(0); a < 4; a++ {
		b, _ := a.MarshalText()
		var back ASPM
		if err := back.UnmarshalText(b); err != nil || back != a {
			t.Errorf("%v: round trip gave %v, %v", a, back, err)
		}
	}
	var p PortType
	if p.UnmarshalText([]byte("bogus")) == nil {
		t.Error("bogus port type accepted")
	}
}
