package nicinfo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ModulePage is one page of a pluggable module's EEPROM as the module
// EEPROM request (ETHTOOL_MSG_MODULE_EEPROM_GET, `ethtool -m`) read it:
// where from, and the bytes. A snapshot keeps the pages, not what was
// decoded from them.
type ModulePage struct {
	I2C    uint8  `json:"i2c"` // 0x50, or 0x51 for an SFP's diagnostics
	Page   uint8  `json:"page"`
	Bank   uint8  `json:"bank,omitempty"`
	Offset uint16 `json:"offset"` // 0 (lower half) or 128 (upper half)
	Data   []byte `json:"data"`
}

// ModuleDiag is what a module's own diagnostics say (digital optical
// monitoring, DOM): its temperature and supply voltage, and per lane its
// laser bias current, transmit and receive optical power, each with the
// module's own alarm and warning thresholds where it has them.
type ModuleDiag struct {
	// Standard is the memory map: "SFF-8472" (SFP), "SFF-8636" (QSFP),
	// "CMIS" (QSFP-DD, OSFP).
	Standard   string `json:"standard"`
	Identifier uint8  `json:"identifier"`
	// Measures are every value read, with its thresholds.
	Measures []Measure `json:"measures"`
}

// Measure is one monitored value in base-ish units: °C, V, mA, mW.
type Measure struct {
	// What is "temperature", "voltage", "bias", "tx_power" or "rx_power".
	What string `json:"what"`
	// Lane is 1-8 for a lane's value, 0 for the module's.
	Lane  int     `json:"lane,omitempty"`
	Value float64 `json:"value"`
	// Thresholds are the module's: high alarm, low alarm, high warning,
	// low warning; nil when it has none (no page 02h/03h, flat memory).
	Thresholds *[4]float64 `json:"thresholds,omitempty"`
}

// Module identifiers (SFF-8024 table 4-1) by memory map.
var (
	sff8472IDs = []uint8{0x02, 0x03, 0x0b}
	sff8636IDs = []uint8{0x0c, 0x0d, 0x11}
	cmisIDs    = []uint8{0x18, 0x19, 0x1b, 0x1e, 0x1f, 0x20}
)

// ErrNoDiagnostics is returned by ParseModule for a module without
// digital diagnostics (a copper DAC, a module that does not implement
// them): no verdict can rest on its EEPROM.
var ErrNoDiagnostics = errors.New("module has no diagnostics")

// page returns the 128 bytes at (i2c, page, bank, offset), or nil.
func pageOf(pages []ModulePage, i2c, page, bank uint8, offset uint16) []byte {
	for _, p := range pages {
		if p.I2C == i2c && p.Page == page && p.Bank == bank && p.Offset == offset && len(p.Data) == 128 {
			return p.Data
		}
	}
	return nil
}

// ParseModule decodes the diagnostics from a module's EEPROM pages. The
// lower page 00h at 0x50 names the memory map; SFF-8472 needs the
// diagnostics at 0x51 (lower half: thresholds, calibration, values),
// SFF-8636 and CMIS read values from page 00h (and CMIS's 11h) and
// thresholds from page 03h (SFF-8636) or 02h (CMIS) when present, and
// SFF-8636 what the module monitors from upper page 00h. A page
// missing or not 128 bytes, or an identifier of none of these, is
// ErrMalformed; a module that says it has no diagnostics is
// ErrNoDiagnostics.
func ParseModule(pages []ModulePage) (*ModuleDiag, error) {
	lower := pageOf(pages, 0x50, 0, 0, 0)
	if lower == nil {
		return nil, fmt.Errorf("%w: module EEPROM: no lower page 00h", ErrMalformed)
	}
	id := lower[0]
	switch {
	case slices.Contains(sff8472IDs, id):
		return parseSFF8472(id, lower, pageOf(pages, 0x51, 0, 0, 0))
	case slices.Contains(sff8636IDs, id):
		return parseSFF8636(id, lower, pageOf(pages, 0x50, 0, 0, 128), pageOf(pages, 0x50, 3, 0, 128))
	case slices.Contains(cmisIDs, id):
		return parseCMIS(id, lower, pageOf(pages, 0x50, 2, 0, 128), pageOf(pages, 0x50, 0x11, 0, 128)), nil
	}
	return nil, fmt.Errorf("%w: module identifier 0x%02x", ErrNoDiagnostics, id)
}

// The raw encodings of SFF-8472 9.2 / SFF-8636 6.2.4 / CMIS 8.2.
func s16(b []byte, o int) float64 { return float64(int16(binary.BigEndian.Uint16(b[o:]))) }
func u16(b []byte, o int) float64 { return float64(binary.BigEndian.Uint16(b[o:])) }

// domUnit converts a raw value of what to its unit: temperature 1/256 °C,
// voltage 100 µV, bias 2 µA, power 0.1 µW.
func domUnit(what string, raw float64) float64 {
	switch what {
	case "temperature":
		return raw / 256
	case "voltage":
		return raw * 100e-6
	case "bias":
		return raw * 2e-3
	}
	return raw * 1e-4 // tx_power, rx_power in mW
}

// rawAt reads the raw value of what at offset o (temperature is signed).
func rawAt(what string, b []byte, o int) float64 {
	if what == "temperature" {
		return s16(b, o)
	}
	return u16(b, o)
}

// thresholdsAt reads the four thresholds of what at o (high alarm, low
// alarm, high warning, low warning), converted by conv.
func thresholdsAt(what string, b []byte, o int, conv func(string, float64) float64) *[4]float64 {
	var t [4]float64
	for i := range t {
		t[i] = conv(what, rawAt(what, b, o+2*i))
	}
	return &t
}

// parseSFF8472 reads an SFP's A2h page (SFF-8472 rev 12.4, tables 9-5,
// 9-6, 9-11): thresholds at 0-39, external calibration constants at
// 56-91, values at 96-105, as A0h byte 92 says.
func parseSFF8472(id uint8, a0, a2 []byte) (*ModuleDiag, error) {
	dom := a0[92]
	if dom&0x40 == 0 {
		return nil, ErrNoDiagnostics
	}
	if a2 == nil {
		return nil, fmt.Errorf("%w: SFF-8472 module with diagnostics but no A2h page read", ErrMalformed)
	}
	conv := domUnit
	if dom&0x10 != 0 { // externally calibrated
		conv = externalCal(a2)
	}
	d := &ModuleDiag{Standard: "SFF-8472", Identifier: id}
	for i, what := range []string{"temperature", "voltage", "bias", "tx_power", "rx_power"} {
		d.Measures = append(d.Measures, Measure{
			What: what, Value: conv(what, rawAt(what, a2, 96+2*i)),
			Thresholds: thresholdsAt(what, a2, 8*i, conv),
		})
	}
	return d, nil
}

// externalCal returns the conversion of an externally calibrated SFP
// (SFF-8472 9.3): slope (unsigned 8.8) and offset for temperature,
// voltage, bias and transmit power, a polynomial of four IEEE 754 floats
// and a constant for receive power.
func externalCal(a2 []byte) func(string, float64) float64 {
	f := func(o int) float64 { return float64(math.Float32frombits(binary.BigEndian.Uint32(a2[o:]))) }
	slope := func(o int) float64 { return u16(a2, o) / 256 }
	lin := map[string]int{"bias": 76, "tx_power": 80, "temperature": 84, "voltage": 88}
	return func(what string, raw float64) float64 {
		if what == "rx_power" {
			return domUnit(what, f(56)*math.Pow(raw, 4)+f(60)*math.Pow(raw, 3)+f(64)*raw*raw+f(68)*raw+f(72))
		}
		o := lin[what]
		return domUnit(what, slope(o)*raw+s16(a2, o+2))
	}
}

// SFF-8636 byte 220 (upper page 00h, Diagnostic Monitoring Type, table
// 6-24): what the module monitors.
const (
	sff8636TempMon  = 0x20
	sff8636VoltMon  = 0x10
	sff8636TXPowMon = 0x04
)

// parseSFF8636 reads a QSFP's lower page 00h (SFF-8636 rev 2.10a, table
// 6-7: temperature 22, supply 26, RX power 34, TX bias 42, TX power 50,
// four lanes) and, when read, upper page 03h's thresholds (table 6-26:
// temperature 128, supply 144, RX power 176, TX bias 184, TX power 192).
// Upper page 00h's byte 220 says which of temperature, supply voltage and
// TX power the module monitors: one that monitors none (a passive copper
// cable, whose values all read 0) is ErrNoDiagnostics, and a value it does
// not monitor is left out. Without that page, a module with flat memory
// (lower page byte 2 bit 2: no pages 01h-03h, the passive cables' kind) is
// ErrNoDiagnostics too.
func parseSFF8636(id uint8, lower, p0, p3 []byte) (*ModuleDiag, error) {
	mon := byte(sff8636TempMon | sff8636VoltMon | sff8636TXPowMon)
	switch {
	case p0 != nil:
		mon = p0[220-128] & mon
	case lower[2]&0x04 != 0:
		mon = 0
	}
	if mon == 0 {
		return nil, fmt.Errorf("%w: SFF-8636 module monitors neither temperature, supply voltage nor TX power", ErrNoDiagnostics)
	}
	d := &ModuleDiag{Standard: "SFF-8636", Identifier: id}
	th := func(what string, o int) *[4]float64 {
		if p3 == nil {
			return nil
		}
		return thresholdsAt(what, p3, o-128, domUnit)
	}
	if mon&sff8636TempMon != 0 {
		d.Measures = append(d.Measures, Measure{What: "temperature", Value: domUnit("temperature", s16(lower, 22)), Thresholds: th("temperature", 128)})
	}
	if mon&sff8636VoltMon != 0 {
		d.Measures = append(d.Measures, Measure{What: "voltage", Value: domUnit("voltage", u16(lower, 26)), Thresholds: th("voltage", 144)})
	}
	for _, l := range []struct {
		what    string
		at, thr int
	}{{"rx_power", 34, 176}, {"bias", 42, 184}, {"tx_power", 50, 192}} {
		if l.what == "tx_power" && mon&sff8636TXPowMon == 0 {
			continue
		}
		for lane := 0; lane < 4; lane++ {
			d.Measures = append(d.Measures, Measure{What: l.what, Lane: lane + 1,
				Value: domUnit(l.what, u16(lower, l.at+2*lane)), Thresholds: th(l.what, l.thr)})
		}
	}
	return d, nil
}

// parseCMIS reads a CMIS module's lower page (CMIS 5.2 table 8-9:
// temperature 14, supply 16), page 11h's lane values (table 8-91: TX
// power 154, TX bias 170, RX power 186, eight lanes) and page 02h's
// thresholds (table 8-74: temperature 128, supply 136, TX power 176, TX
// bias 184, RX power 192). A lane whose data path is not activated (page
// 11h bytes 128-131, DPStateHostLane1-8) carries no traffic and is left
// out; where the module reports no data-path state (0 or a reserved
// value), a lane whose transmit power reads 0 is taken as unused. An
// activated lane is judged whatever it reads, a dark laser included. TX
// bias is read without page 01h's multiplier (×1).
func parseCMIS(id uint8, lower, p2, p11 []byte) *ModuleDiag {
	d := &ModuleDiag{Standard: "CMIS", Identifier: id}
	th := func(what string, o int) *[4]float64 {
		if p2 == nil {
			return nil
		}
		return thresholdsAt(what, p2, o-128, domUnit)
	}
	d.Measures = append(d.Measures,
		Measure{What: "temperature", Value: domUnit("temperature", s16(lower, 14)), Thresholds: th("temperature", 128)},
		Measure{What: "voltage", Value: domUnit("voltage", u16(lower, 16)), Thresholds: th("voltage", 136)})
	if p11 == nil {
		return d
	}
	for lane := 0; lane < 8; lane++ {
		if !cmisLaneInUse(p11, lane) {
			continue
		}
		for _, l := range []struct {
			what    string
			at, thr int
		}{{"tx_power", 154, 176}, {"bias", 170, 184}, {"rx_power", 186, 192}} {
			d.Measures = append(d.Measures, Measure{What: l.what, Lane: lane + 1,
				Value: domUnit(l.what, u16(p11, l.at-128+2*lane)), Thresholds: th(l.what, l.thr)})
		}
	}
	return d
}

// DPState values of CMIS page 11h: 1 DPDeactivated, 2 DPInit, 3 DPDeinit,
// 4 DPActivated, 5 DPTxTurnOn, 6 DPTxTurnOff, 7 DPInitialized; 0 reserved.
const (
	dpActivated = 0x4
	dpStateMax  = 0x7
)

// cmisLaneInUse reports whether lane (0-7) of a CMIS module carries
// traffic: its data-path state (page 11h, byte 128 + lane/2, the low
// nibble for even lanes) is DPActivated; for a state the module does not
// report, its transmit power is not 0.
func cmisLaneInUse(p11 []byte, lane int) bool {
	st := p11[lane/2] >> (4 * (lane % 2)) & 0x0f
	if st == 0 || st > dpStateMax {
		return u16(p11, 154-128+2*lane) != 0
	}
	return st == dpActivated
}

// checkModulePages refuses module EEPROM pages a snapshot could not hold:
// more than 8, a half-page offset other than 0 or 128, more than 128
// bytes in one.
func checkModulePages(pages []ModulePage) error {
	if len(pages) > 8 {
		return fmt.Errorf("%w: %d module EEPROM pages", ErrMalformed, len(pages))
	}
	for _, p := range pages {
		if p.Offset != 0 && p.Offset != 128 || len(p.Data) > 128 {
			return fmt.Errorf("%w: module EEPROM page %02xh at %d, %d bytes", ErrMalformed, p.Page, p.Offset, len(p.Data))
		}
	}
	return nil
}
