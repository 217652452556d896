package nicinfo

import (
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// Real module EEPROM, as Bjørn Mork posted it to netdev on 23 February
// 2025 ("Phy access methods for copper SFP+ disguised as SR", i2cdump of
// an SFP-10G-T8 module on host s508cl): sfpA0 is its page at 0x50, sfpA2
// the lower half of its page at 0x51 (diagnostics: thresholds, then the
// values at 96-105, 66.2 °C, 3.27 V, 6 mA, 0.50 mW both ways).
// rollballA2 is the lower half at 0x51 of the second module of the same
// message (a 10GBASE-T SFP+ that talks RollBall), which reports no bias
// and no optical power: its own alarm flags (bytes 112-113, 05 40) say
// bias, TX power and RX power low alarm. Its page at 0x50 was not posted;
// the first module's, which says diagnostics internally calibrated, stands
// in for it.
var (
	sfpA0 = mustHex(`03 04 07 10 00 00 00 00 00 00 00 06 67 00 00 00 08 02 00 1e 4f 45 4d 20 20 20 20 20 20 20 20 20
20 20 20 20 00 00 00 00 53 46 50 2d 31 30 47 2d 54 38 20 20 20 20 20 20 41 20 20 20 00 00 00 0c
00 1a 00 00 46 32 35 30 31 31 34 54 30 30 31 30 20 20 20 20 32 35 30 31 31 35 20 20 68 f0 03 eb
00 00 11 6b e0 e7 c2 e1 ff ff 18 79 21 c8 24 ed d8 45 85 00 00 00 00 00 00 00 00 00 1c 24 98 22`)
	sfpA2 = mustHex(`50 00 f6 00 4b 00 fb 00 8c 9f 71 48 88 b8 75 30 1d 4c 01 f4 19 64 03 e8 2b d4 07 46 27 10 09 28
2b d4 02 85 27 10 03 2c 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 00 3f 80 00 00 00 00 00 00 01 00 00 00 01 00 00 00 01 00 00 00 01 00 00 00 00 00 00 7e
42 33 7f ca 0b b8 13 92 13 92 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 40 00 00 00 00 00`)
	rollballA2 = mustHex(`50 00 f6 00 4b 00 fb 00 8c a0 75 30 88 b8 79 18 1d 4c 01 f4 19 64 03 e8 4d f0 06 30 3d e8 06 f2
2b d4 00 c7 27 10 00 df 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 00 3f 80 00 00 00 00 00 00 01 00 00 00 01 00 00 00 01 00 00 00 01 00 00 00 00 00 00 23
23 f7 82 6f 00 00 00 00 00 00 00 00 00 00 82 00 05 40 00 00 05 40 00 00 00 00 00 ff ff ff ff 00`)
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		panic(err)
	}
	return b
}

// SFPPages are the real module's pages as the module EEPROM request
// returns them.
func sfpPages(a2 []byte) []ModulePage {
	return []ModulePage{{I2C: 0x50, Data: sfpA0}, {I2C: 0x51, Data: a2}}
}

func measure(d *ModuleDiag, what string) Measure {
	for _, m := range d.Measures {
		if m.What == what {
			return m
		}
	}
	return Measure{}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-3*math.Max(1, math.Abs(b)) }

// SFF-8472 decoding of the real module: values and thresholds as
// SFF-8472 table 9-11 computes them (the same figures `ethtool -m`
// prints for such a module).
func TestParseModuleSFF8472(t *testing.T) {
	d, err := ParseModule(sfpPages(sfpA2))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][5]float64{ // value, high alarm, low alarm, high warning, low warning
		"temperature": {66.199, 80, -10, 75, -5},
		"voltage":     {3.2714, 3.6, 2.9, 3.5, 3.0},
		"bias":        {6.0, 15, 1, 13, 2},
		"tx_power":    {0.501, 1.122, 0.1862, 1.0, 0.2344},
		"rx_power":    {0.501, 1.122, 0.0645, 1.0, 0.0812},
	}
	if d.Standard != "SFF-8472" || d.Identifier != 3 || len(d.Measures) != 5 {
		t.Fatalf("%+v", d)
	}
	for what, w := range want {
		m := measure(d, what)
		if !near(m.Value, w[0]) || m.Thresholds == nil || !near(m.Thresholds[0], w[1]) || !near(m.Thresholds[1], w[2]) ||
			!near(m.Thresholds[2], w[3]) || !near(m.Thresholds[3], w[4]) {
			t.Errorf("%s: %v %v, want %v", what, m.Value, m.Thresholds, w)
		}
	}
	d, err = ParseModule(sfpPages(rollballA2))
	if err != nil {
		t.Fatal(err)
	}
	if m := measure(d, "rx_power"); m.Value != 0 || !near(m.Thresholds[1], 0.0199) {
		t.Errorf("rollball rx: %+v", m)
	}
	if m := measure(d, "temperature"); !near(m.Value, 35.965) {
		t.Errorf("rollball temperature: %+v", m)
	}
}

// A module without diagnostics (A0h byte 92 clear: a DAC), one whose
// diagnostic page was not read, an unknown identifier, pages of the wrong
// size: each says so.
func TestParseModuleRefuses(t *testing.T) {
	dac := append([]byte(nil), sfpA0...)
	dac[92] = 0
	if _, err := ParseModule([]ModulePage{{I2C: 0x50, Data: dac}}); !errors.Is(err, ErrNoDiagnostics) {
		t.Errorf("DAC: %v", err)
	}
	if _, err := ParseModule([]ModulePage{{I2C: 0x50, Data: sfpA0}}); !errors.Is(err, ErrMalformed) {
		t.Errorf("no A2h: %v", err)
	}
	odd := append([]byte(nil), sfpA0...)
	odd[0] = 0x7f
	if _, err := ParseModule([]ModulePage{{I2C: 0x50, Data: odd}}); !errors.Is(err, ErrNoDiagnostics) {
		t.Errorf("identifier 0x7f: %v", err)
	}
	if _, err := ParseModule([]ModulePage{{I2C: 0x50, Data: sfpA0[:64]}}); !errors.Is(err, ErrMalformed) {
		t.Errorf("short page: %v", err)
	}
	if err := checkModulePages([]ModulePage{{Offset: 64}}); !errors.Is(err, ErrMalformed) {
		t.Errorf("offset 64: %v", err)
	}
}

// putBE16 writes v big-endian at b[o:], as module pages hold their values.
func putBE16(b []byte, o int, v uint16) { b[o], b[o+1] = byte(v>>8), byte(v) }

// The SFF-8636 layout: bytes constructed from the specification's offsets
// (SFF-8636 rev 2.10a tables 6-7 and 6-26), not captured from a module: a
// QSFP28 at 41.5 °C, 3.3 V, lane 2's RX power 0.0200 mW under a low alarm
// of 0.0316 mW.
func TestParseModuleQSFP(t *testing.T) {
	put := putBE16
	lower := make([]byte, 128)
	lower[0] = 0x11
	put(lower, 22, 41*256+128)
	put(lower, 26, 33000)
	for lane := 0; lane < 4; lane++ {
		put(lower, 34+2*lane, 5000)
		put(lower, 42+2*lane, 3500)
		put(lower, 50+2*lane, 6000)
	}
	put(lower, 36, 200)
	p3 := make([]byte, 128)
	put(p3, 176-128, 20000)
	put(p3, 178-128, 316)
	put(p3, 180-128, 15000)
	put(p3, 182-128, 500)
	d, err := ParseModule([]ModulePage{{I2C: 0x50, Data: lower}, {I2C: 0x50, Page: 3, Offset: 128, Data: p3}})
	if err != nil || d.Standard != "SFF-8636" || len(d.Measures) != 14 {
		t.Fatalf("%+v %v", d, err)
	}
	m := d.Measures[3] // rx_power lane 2
	if m.What != "rx_power" || m.Lane != 2 || !near(m.Value, 0.02) || !near(m.Thresholds[1], 0.0316) {
		t.Errorf("lane 2: %+v", m)
	}
	if m := measure(d, "temperature"); !near(m.Value, 41.5) {
		t.Errorf("temperature %+v", m)
	}
	// Upper page 00h's byte 220 says what the module monitors: a passive
	// copper cable (nothing; its values read 0) has no diagnostics; one
	// without TX power monitoring has no TX power values. Flat memory with
	// no upper page 00h read is taken as a passive cable.
	upper := make([]byte, 128)
	qsfp := func(lower, p0 []byte) (*ModuleDiag, error) {
		pages := []ModulePage{{I2C: 0x50, Data: lower}, {I2C: 0x50, Page: 3, Offset: 128, Data: p3}}
		if p0 != nil {
			pages = append(pages, ModulePage{I2C: 0x50, Offset: 128, Data: p0})
		}
		return ParseModule(pages)
	}
	if d, err := qsfp(lower, upper); !errors.Is(err, ErrNoDiagnostics) {
		t.Errorf("byte 220 = 0 (passive DAC): %+v %v", d, err)
	}
	upper[220-128] = 0x30 | 0x08 // temperature, voltage, average RX power; no TX power
	if d, err := qsfp(lower, upper); err != nil || len(d.Measures) != 2+4*2 || slices.ContainsFunc(d.Measures, func(m Measure) bool { return m.What == "tx_power" }) {
		t.Errorf("no TX power monitoring: %+v %v", d, err)
	}
	flat := append([]byte(nil), lower...)
	flat[2] |= 0x04
	if d, err := qsfp(flat, nil); !errors.Is(err, ErrNoDiagnostics) {
		t.Errorf("flat memory, no upper page 00h: %+v %v", d, err)
	}
}

// The CMIS layout: bytes constructed from the specification's offsets
// (CMIS 5.2 tables 8-9, 8-74, 8-91), not captured from a module: a QSFP-DD
// with lanes 1-4 in use (data path activated), lane 3's laser dark, and
// lanes 5-8 deactivated with stale readings; the same module reporting no
// data-path state, whose lanes with no transmit power are taken as unused.
func TestParseModuleCMIS(t *testing.T) {
	put := putBE16
	cl := make([]byte, 128)
	cl[0] = 0x18
	put(cl, 14, 50*256)
	put(cl, 16, 33100)
	p11 := make([]byte, 128)
	for lane := 0; lane < 8; lane++ {
		put(p11, 154-128+2*lane, 8000)
		put(p11, 186-128+2*lane, 7000)
	}
	put(p11, 154-128+2*2, 0)                  // lane 3: no light from its laser
	copy(p11, []byte{0x44, 0x44, 0x11, 0x11}) // DPActivated for lanes 1-4, DPDeactivated for 5-8
	cmis := func(p11 []byte) *ModuleDiag {
		t.Helper()
		d, err := ParseModule([]ModulePage{{I2C: 0x50, Data: cl}, {I2C: 0x50, Page: 0x11, Offset: 128, Data: p11}})
		if err != nil || d.Standard != "CMIS" || d.Measures[2].Thresholds != nil {
			t.Fatalf("%+v %v", d, err)
		}
		return d
	}
	lanes := func(d *ModuleDiag) []int {
		var out []int
		for _, m := range d.Measures {
			if m.What == "tx_power" {
				out = append(out, m.Lane)
			}
		}
		return out
	}
	d := cmis(p11)
	if got := lanes(d); !slices.Equal(got, []int{1, 2, 3, 4}) || len(d.Measures) != 2+4*3 {
		t.Errorf("activated lanes 1-4: tx_power of lanes %v, %d measures", got, len(d.Measures))
	}
	if m := d.Measures[2+2*3]; m.Lane != 3 || m.What != "tx_power" || m.Value != 0 {
		t.Errorf("lane 3's dark laser: %+v", m)
	}
	copy(p11, []byte{0, 0, 0, 0}) // no data-path state reported
	if got := lanes(cmis(p11)); !slices.Equal(got, []int{1, 2, 4, 5, 6, 7, 8}) {
		t.Errorf("no DPState: tx_power of lanes %v, want every lane with transmit power", got)
	}
}

// FuzzModulePages: hostile pages never panic; what decodes is finite.
func FuzzModulePages(f *testing.F) {
	f.Add(sfpA0, sfpA2)
	f.Add(sfpA0, rollballA2)
	f.Add([]byte{0x11}, []byte{})
	f.Fuzz(func(t *testing.T, lower, upper []byte) {
		pages := []ModulePage{{I2C: 0x50, Data: lower}, {I2C: 0x51, Data: upper}, {I2C: 0x50, Page: 3, Offset: 128, Data: upper},
			{I2C: 0x50, Offset: 128, Data: upper},
			{I2C: 0x50, Page: 2, Offset: 128, Data: upper}, {I2C: 0x50, Page: 0x11, Offset: 128, Data: upper}}
		d, err := ParseModule(pages)
		if err != nil {
			return
		}
		for _, m := range d.Measures {
			if math.IsInf(m.Value, 0) && m.What != "rx_power" {
				t.Fatalf("%+v", m)
			}
		}
	})
}
