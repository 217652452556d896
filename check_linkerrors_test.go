package nicdiag

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// x722-lewisburg's eno1 (602 M frames received, rx_crc_errors 0 as
// captured) with damaged-frame counters set: the 2.4 M CRC errors
// in sysfs, with i40e's port.rx_crc_errors agreeing and some illegal
// bytes, is warn; 150 is info; the captured zeros are silent. RS-FEC
// uncorrectable blocks count as damaged frames too.
func TestLinkErrors(t *testing.T) {
	run := func(crc string, stats map[string]uint64, fec *nicinfo.FEC) *finding.Finding {
		v := variant(t, "x722-lewisburg").files(map[string]string{"sys/class/net/eno1/statistics/rx_crc_errors": crc + "\n"}).
			ethtool("eno1", func(a *nicinfo.EthtoolAnswers) { a.LossStats, a.FEC = stats, fec })
		return find(checkTree(t, v.dir, WithInterfaces("eno1")), finding.NICLinkErrors, "eno1")
	}
	f := run("2400000", map[string]uint64{"port.rx_crc_errors": 2400000, "port.illegal_bytes": 5}, nil)
	if f == nil || f.Severity != finding.Warn || !strings.Contains(f.Summary, "2400000 frames with a bad CRC (sysfs:rx_crc_errors)") ||
		!strings.Contains(f.Summary, "1 in 252") || !strings.Contains(f.Summary, "tops out near") || !strings.Contains(f.Fix, "ethtool -m eno1") ||
		f.Evidence["ethtool:port.rx_crc_errors"] != "2400000" {
		t.Errorf("2.4 M: %v", f)
	}
	if f := run("150", nil, nil); f == nil || f.Severity != finding.Info {
		t.Errorf("150: %v", f)
	}
	if f := run("0", nil, nil); f != nil {
		t.Errorf("healthy: %s", f)
	}
	unc, cor := uint64(5000), uint64(900000)
	if f := run("0", nil, &nicinfo.FEC{Active: "RS", Uncorrectable: &unc, Corrected: &cor}); f == nil || f.Severity != finding.Warn ||
		!strings.Contains(f.Summary, "5000 FEC blocks it could not correct (RS FEC)") || f.Evidence["fec_corrected_blocks"] != "900000" {
		t.Errorf("FEC: %v", f)
	}
	// The share that warns follows the link's standard: 5 in 10^6 (3011
	// of 602 M) is far beyond 10GBASE-R's bit error ratio of 10^-12 but
	// within 1000BASE-T's 10^-10 (about 1.2 in 10^6 full-size frames,
	// times ten): warn at 10 Gb/s, info at 1 Gb/s; 20000 (33 in 10^6) warn
	// at 1 Gb/s too; at an unknown speed only the loosest standard
	// (10BASE-T, 10^-8) counts.
	speed := func(mbps int, crc string) *finding.Finding {
		v := variant(t, "x722-lewisburg").files(map[string]string{
			"sys/class/net/eno1/statistics/rx_crc_errors": crc + "\n", "sys/class/net/eno1/speed": fmt.Sprintln(mbps)}).
			ethtool("eno1", func(a *nicinfo.EthtoolAnswers) { a.Link.SpeedMbps = mbps })
		return find(checkTree(t, v.dir, WithInterfaces("eno1")), finding.NICLinkErrors, "eno1")
	}
	for _, c := range []struct {
		mbps int
		crc  string
		sev  finding.Severity
		std  string
	}{
		{10000, "3011", finding.Warn, "10 Gb/s and faster Ethernet's specification (a bit error ratio of 10^-12)"},
		{1000, "3011", finding.Info, "1000BASE-T's specification (a bit error ratio of 10^-10) loses at most 1 in 823"},
		{1000, "20000", finding.Warn, "1000BASE-T"},
		{-1, "20000", finding.Info, "unknown speed within the loosest Ethernet specification (10BASE-T"},
	} {
		if f := speed(c.mbps, c.crc); f == nil || f.Severity != c.sev || !strings.Contains(f.Summary, c.std) {
			t.Errorf("%s CRC errors at %d Mb/s: %v", c.crc, c.mbps, f)
		}
	}
	// Length errors are no damage on the wire (igb's rx_length_errors is
	// ruc + roc: frames over the MTU from a jumbo-frame peer): 50 M of them
	// alone are info, with the MTU as the fix; beside CRC errors they are
	// said apart and leave the verdict on the CRC errors alone.
	length := func(crc, n string) *finding.Finding {
		v := variant(t, "x722-lewisburg").files(map[string]string{
			"sys/class/net/eno1/statistics/rx_crc_errors": crc + "\n", "sys/class/net/eno1/statistics/rx_length_errors": n + "\n"})
		return find(checkTree(t, v.dir, WithInterfaces("eno1")), finding.NICLinkErrors, "eno1")
	}
	if f := length("0", "50000000"); f == nil || f.Severity != finding.Info || !strings.Contains(f.Summary, "50000000 frames of a wrong length (sysfs:rx_length_errors)") ||
		!strings.Contains(f.Summary, "1500-byte MTU") || !strings.Contains(f.Fix, "one MTU") || strings.Contains(f.Fix, "cable") || f.Evidence["damaged"] != "" {
		t.Errorf("length errors alone: %v", f)
	}
	if f := length("0", "99"); f != nil {
		t.Errorf("99 length errors: %s", f)
	}
	if f := length("150", "50000000"); f == nil || f.Severity != finding.Info || f.Evidence["damaged"] != "150" ||
		!strings.Contains(f.Summary, "Apart from those, it dropped 50000000") || !strings.Contains(f.Fix, "cable") || !strings.Contains(f.Fix, "one MTU") {
		t.Errorf("150 CRC errors and length errors: %v", f)
	}
	// Corrected blocks alone are what FEC is for: nothing.
	zero := uint64(0)
	if f := run("0", nil, &nicinfo.FEC{Active: "RS", Uncorrectable: &zero, Corrected: &cor}); f != nil {
		t.Errorf("corrected only: %s", f)
	}
}

// The E810-XXV's enp162s0f0 (an SFP28 port) with the module EEPROM pages
// of the real SFP+ in nicinfo's module_test.go (netdev, February 2025):
// the SFP-10G-T8 within its thresholds is silent; the RollBall module's
// page at 0x51, with no bias and no optical power, is three low alarms:
// warn, naming the RX power and the fix.
func TestModuleDiagnostics(t *testing.T) {
	h := func(s string) []byte {
		b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a0 := h(`03 04 07 10 00 00 00 00 00 00 00 06 67 00 00 00 08 02 00 1e 4f 45 4d 20 20 20 20 20 20 20 20 20
20 20 20 20 00 00 00 00 53 46 50 2d 31 30 47 2d 54 38 20 20 20 20 20 20 41 20 20 20 00 00 00 0c
00 1a 00 00 46 32 35 30 31 31 34 54 30 30 31 30 20 20 20 20 32 35 30 31 31 35 20 20 68 f0 03 eb
00 00 11 6b e0 e7 c2 e1 ff ff 18 79 21 c8 24 ed d8 45 85 00 00 00 00 00 00 00 00 00 1c 24 98 22`)
	healthy := h(`50 00 f6 00 4b 00 fb 00 8c 9f 71 48 88 b8 75 30 1d 4c 01 f4 19 64 03 e8 2b d4 07 46 27 10 09 28
2b d4 02 85 27 10 03 2c 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 00 3f 80 00 00 00 00 00 00 01 00 00 00 01 00 00 00 01 00 00 00 01 00 00 00 00 00 00 7e
42 33 7f ca 0b b8 13 92 13 92 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 40 00 00 00 00 00`)
	dark := h(`50 00 f6 00 4b 00 fb 00 8c a0 75 30 88 b8 79 18 1d 4c 01 f4 19 64 03 e8 4d f0 06 30 3d e8 06 f2
2b d4 00 c7 27 10 00 df 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 00 3f 80 00 00 00 00 00 00 01 00 00 00 01 00 00 00 01 00 00 00 01 00 00 00 00 00 00 23
23 f7 82 6f 00 00 00 00 00 00 00 00 00 00 82 00 05 40 00 00 05 40 00 00 00 00 00 ff ff ff ff 00`)
	run := func(a2 []byte, operstate string) *finding.Finding {
		v := variant(t, "e810-ice-numa1").ethtool("enp162s0f0", func(a *nicinfo.EthtoolAnswers) {
			a.Module = []nicinfo.ModulePage{{I2C: 0x50, Data: a0}, {I2C: 0x51, Data: a2}}
		}).files(map[string]string{"sys/class/net/enp162s0f0/operstate": operstate + "\n"})
		return find(checkTree(t, v.dir, WithInterfaces("enp162s0f0")), finding.NICModuleDiagnostics, "enp162s0f0")
	}
	if f := run(healthy, "up"); f != nil {
		t.Errorf("healthy module: %s", f)
	}
	f := run(dark, "up")
	if f == nil || f.Severity != finding.Warn || !strings.Contains(f.Summary, "rx power 0.0000 mW (-inf dBm), below its low alarm 0.0199 mW (-17.0 dBm)") ||
		!strings.Contains(f.Summary, "bias 0.00 mA, below its low alarm 1.00 mA") || !strings.Contains(f.Fix, "clean the fibre connectors") ||
		f.Evidence["standard"] != "SFF-8472" {
		t.Errorf("dark module: %v", f)
	}
	if f != nil && strings.Count(strings.ToLower(f.Fix), "replace the module") != 1 {
		t.Errorf("dark module: the fix repeats itself: %s", f.Fix)
	}
	// The same dark module on a port that is down (uncabled, the peer off,
	// the laser off): no light and no bias are what a port without carrier
	// reads, not a failing module.
	for _, state := range []string{"down", "lowerlayerdown"} {
		if f := run(dark, state); f != nil {
			t.Errorf("dark module, operstate %s: %s", state, f)
		}
	}
}
