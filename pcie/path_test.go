package pcie

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/option"
)

var bg = context.Background()

// expressAt returns the offset of the Express capability in b.
func expressAt(t testing.TB, b []byte) int {
	t.Helper()
	c, err := DecodeConfig(b)
	if err != nil || c.Express == nil {
		t.Fatalf("no Express capability: %v", err)
	}
	return c.Express.Offset
}

// setLink patches a config's LnkCap or LnkSta (reg 0x0c or 0x12) speed code
// and width, for trees reconstructed around a real dump.
func setLink(t testing.TB, b []byte, reg int, speedCode, width int) {
	off := expressAt(t, b) + reg
	if reg == 0x0c {
		v := binary.LittleEndian.Uint32(b[off:])
		v = v&^0x3ff | uint32(width)<<4 | uint32(speedCode)
		binary.LittleEndian.PutUint32(b[off:], v)
		return
	}
	v := binary.LittleEndian.Uint16(b[off:])
	v = v&^0x3ff | uint16(width)<<4 | uint16(speedCode)
	binary.LittleEndian.PutUint16(b[off:], v)
}

// motivatingTree is the 82576 dual-port card on a mini-PCIe-to-x1 adapter
// (docs/field-reports.md report 001). The card's 4 KiB config is the pciutils dump with LnkSta
// width patched from x4 to x1 (it trains x1 in a one-lane slot); function 1
// reuses function 0's bytes. The root port is ICH10 00:1c.1 from the
// tree-asus-p6t6 dump with LnkCap patched to 5 GT/s x1: the seed says an
// I350 reached 5 GT/s on the same adapter. headerOnly cuts every config to
// the 64 bytes a non-root reader gets.
func motivatingTree(t testing.TB, headerOnly bool) *tree {
	card := slices.Clone(readDumps(t, "82576-et-dual.lspci")["01:00.0"].Config)
	setLink(t, card, 0x12, 1, 1)
	port := slices.Clone(readDumps(t, "rtl8111-ich10.lspci")["00:1c.1"].Config)
	setLink(t, port, 0x0c, 2, 1)
	portAttrs, cardAttrs := attrsFromConfig(t, port), attrsFromConfig(t, card)
	if headerOnly {
		card, port = card[:64], port[:64]
	}
	tr := newTree(t)
	tr.add([]string{"pci0000:00", "0000:00:1c.1"}, portAttrs, port)
	tr.add([]string{"pci0000:00", "0000:00:1c.1", "0000:01:00.0"}, cardAttrs, card)
	tr.add([]string{"pci0000:00", "0000:00:1c.1", "0000:01:00.1"}, cardAttrs, card)
	return tr
}

func TestPathMotivating82576(t *testing.T) {
	p, err := PathTo(bg, "0000:01:00.1", option.Root(motivatingTree(t, false).dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hops) != 1 || p.Architectural != "" || len(p.Notes) != 0 {
		t.Fatalf("hops %d, architectural %q, notes %q", len(p.Hops), p.Architectural, p.Notes)
	}
	h := p.Hops[0]
	if h.Upstream.Address != "0000:00:1c.1" || h.Downstream.Address != "0000:01:00.1" {
		t.Errorf("ends %s - %s", h.Upstream.Address, h.Downstream.Address)
	}
	if portName(h.Upstream.PortType) != "root_port" || portName(h.Downstream.PortType) != "endpoint" {
		t.Errorf("port types %q %q", portName(h.Upstream.PortType), portName(h.Downstream.PortType))
	}
	// MPS/MRRS come from the config file round-tripped through sysfs and
	// must match what lspci printed for the same bytes.
	want := parseLspci(t, readDumps(t, "82576-et-dual.lspci")["01:00.0"].Text)
	if h.Downstream.MaxPayload != want.MPS || h.Downstream.MaxReadRequest != want.MRRS {
		t.Errorf("MPS/MRRS %d/%d, lspci %d/%d", h.Downstream.MaxPayload, h.Downstream.MaxReadRequest, want.MPS, want.MRRS)
	}
	if h.Speed != 2.5 || h.Width != 1 || h.CapableSpeed != 2.5 || h.CapableWidth != 1 {
		t.Errorf("trained %v x%d, capable %v x%d", h.Speed, h.Width, h.CapableSpeed, h.CapableWidth)
	}
	if h.SpeedLimitedBy != "device" || h.WidthLimitedBy != "port" {
		t.Errorf("limited by %q/%q", h.SpeedLimitedBy, h.WidthLimitedBy)
	}
	if h.Verdict != VerdictSlotLimited || h.Downgraded || !h.SlotLimited {
		t.Errorf("verdict %s downgraded=%v slot=%v", h.Verdict, h.Downgraded, h.SlotLimited)
	}
	x1 := &LinkAttrs{CurrentSpeed: 2.5, CurrentWidth: 1, MaxSpeed: 2.5, MaxWidth: 4}
	wantFns := []Function{{Address: "0000:01:00.0", Class: 0x020000, Network: true, Link: x1}, {Address: "0000:01:00.1", Class: 0x020000, Network: true, Link: x1}}
	if !reflect.DeepEqual(h.Functions, wantFns) {
		t.Errorf("functions %+v", h.Functions)
	}
	// The root port 00:1c.1 [8086:3a42] is an ICH10's: the DMI above it
	// (2.5 GT/s x4) is modelled, shared by the chipset's root ports and
	// all below them (here the 82576's two functions).
	c := p.Chipset
	if c == nil || c.Chipset == nil || c.Chipset.Link != "DMI 1.0 x4" || c.Speed != 2.5 || c.Width != 4 ||
		c.Upstream.Address != "0000:00:00.0" || c.Downstream.Address != "0000:00:1c.1" || len(c.Functions) != 3 || c.Functions[0].Address != "0000:00:1c.1" {
		t.Errorf("chipset hop %+v", c)
	}
	fs := p.Findings()
	if len(fs) != 1 || fs[0].Code != finding.PCIeSlotLimited || fs[0].Severity != finding.Info {
		t.Fatalf("findings %v", fs)
	}
	f := fs[0]
	if f.Subject != "0000:01:00.1" || f.Summary != "0000:01:00.1 can do x4 but its port 0000:00:1c.1 allows only x1: the slot (or adapter) limits the link to 2.5 GT/s x1" || f.Evidence["mps"] != "256" {
		t.Errorf("finding %+v", f)
	}
}

func TestPathNonRootView(t *testing.T) {
	p, err := PathTo(bg, "0000:01:00.0", option.Root(motivatingTree(t, true).dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hops) != 1 || !slices.ContainsFunc(p.Notes, func(s string) bool { return strings.Contains(s, "assumed from position") }) {
		t.Fatalf("hops %d notes %q", len(p.Hops), p.Notes)
	}
	h := p.Hops[0]
	if h.Downstream.MaxPayload != 0 || h.Downstream.PortType != nil || h.Downstream.ConfigNote != notReadableNote {
		t.Errorf("non-root end: %+v", h.Downstream)
	}
	// The sysfs link files stay readable, so the verdict is the same.
	if h.Verdict != VerdictSlotLimited || h.CapableWidth != 1 || h.CapableSpeed != 2.5 {
		t.Errorf("verdict %s capable %v x%d", h.Verdict, h.CapableSpeed, h.CapableWidth)
	}
	fs := p.Findings()
	if len(fs) != 1 {
		t.Fatalf("findings %v", fs)
	}
	if got := fs[0].Evidence["mps"]; got != "unknown ("+notReadableNote+")" {
		t.Errorf("mps evidence %q", got)
	}
	if !strings.Contains(fs[0].Evidence["aspm"], "unknown") {
		t.Errorf("aspm evidence %q", fs[0].Evidence["aspm"])
	}
}

// TestPathConnectX3Haswell: a healthy 8 GT/s x8 NIC on its root port, both
// configs from the pciutils dump; nothing to report.
func TestPathConnectX3Haswell(t *testing.T) {
	d := readDumps(t, "connectx3pro-haswell.lspci")
	port, nic := d["00:02.0"].Config, d["03:00.0"].Config
	tr := newTree(t)
	tr.add([]string{"pci0000:00", "0000:00:02.0"}, attrsFromConfig(t, port), port)
	tr.add([]string{"pci0000:00", "0000:00:02.0", "0000:03:00.0"}, attrsFromConfig(t, nic), nic)
	p, err := PathTo(bg, "0000:03:00.0", option.Root(tr.dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hops) != 1 {
		t.Fatalf("hops %+v", p.Hops)
	}
	h := p.Hops[0]
	if h.Verdict != VerdictOK || h.Speed != 8 || h.Width != 8 || h.CapableSpeed != 8 || h.CapableWidth != 8 || len(h.Notes) != 0 {
		t.Errorf("hop %+v", h)
	}
	if fs := p.Findings(); len(fs) != 0 {
		t.Errorf("findings on a healthy link: %v", fs)
	}
	if h.Upstream.MaxReadRequest != 128 || h.Downstream.MaxReadRequest != 512 {
		t.Errorf("MRRS %d/%d", h.Upstream.MaxReadRequest, h.Downstream.MaxReadRequest)
	}
}

// ich10Tree places the two RTL8111 of the P6T6 dump below the ICH10 root
// port whose secondary bus (config byte 0x19) is theirs; 00:1c.0 is empty.
func ich10Tree(t testing.TB) *tree {
	d := readDumps(t, "rtl8111-ich10.lspci")
	tr := newTree(t)
	ports := []string{"00:1c.0", "00:1c.1", "00:1c.2"}
	for _, p := range ports {
		tr.add([]string{"pci0000:00", "0000:" + p}, attrsFromConfig(t, d[p].Config), d[p].Config)
	}
	for _, nic := range []string{"07:00.0", "08:00.0"} {
		placed := false
		for _, p := range ports {
			if fmt.Sprintf("%02x", d[p].Config[0x19]) == nic[:2] {
				tr.add([]string{"pci0000:00", "0000:" + p, "0000:" + nic}, attrsFromConfig(t, d[nic].Config), d[nic].Config)
				placed = true
			}
		}
		if !placed {
			t.Fatalf("no port has secondary bus %s", nic[:2])
		}
	}
	return tr
}

func TestLinksICH10(t *testing.T) {
	hops, err := Links(bg, option.Root(ich10Tree(t).dir))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hops {
		got = append(got, string(h.Upstream.Address+">"+h.Downstream.Address))
		if h.Verdict != VerdictOK || len(h.Findings()) != 0 {
			t.Errorf("%s: verdict %s, findings %v", h.Upstream.Address, h.Verdict, h.Findings())
		}
		// Capability is the lower LnkCap of the two ends, straight from
		// the bytes.
		u, _ := DecodeConfig(readDumps(t, "rtl8111-ich10.lspci")[string(h.Upstream.Address[5:])].Config)
		dn, _ := DecodeConfig(readDumps(t, "rtl8111-ich10.lspci")[string(h.Downstream.Address[5:])].Config)
		if h.CapableSpeed != min(u.Express.LinkCapSpeed, dn.Express.LinkCapSpeed) ||
			h.CapableWidth != min(u.Express.LinkCapWidth, dn.Express.LinkCapWidth) {
			t.Errorf("%s capable %v x%d", h.Upstream.Address, h.CapableSpeed, h.CapableWidth)
		}
	}
	// The empty port 00:1c.0 (LnkSta width 0) is no link at all.
	want := []string{"0000:00:1c.1>0000:08:00.0", "0000:00:1c.2>0000:07:00.0"}
	if !slices.Equal(got, want) {
		t.Errorf("links %q, want %q", got, want)
	}
}

// emptySlotsTree: the EB1035 ports as lspci printed them (no hex, so no
// config files). 00:01.0 and 00:1c.0 are empty; 00:1c.1 has a device on bus
// 03 that the dump does not show, reconstructed with the given maximum
// speed.
func emptySlotsTree(t testing.TB, childMax float64) *tree {
	tr := newTree(t)
	tr.add([]string{"pci0000:00", "0000:00:01.0"}, attrs("0x8086", "0x0101", "0x060400", 2.5, 0, 5, 16), nil)
	tr.add([]string{"pci0000:00", "0000:00:1c.0"}, attrs("0x8086", "0x1e10", "0x060400", 2.5, 0, 5, 1), nil)
	tr.add([]string{"pci0000:00", "0000:00:1c.1"}, attrs("0x8086", "0x1e12", "0x060400", 2.5, 1, 5, 1), nil)
	tr.add([]string{"pci0000:00", "0000:00:1c.1", "0000:03:00.0"}, attrs("0x10ec", "0x8168", "0x020000", 2.5, 1, childMax, 1), nil)
	return tr
}

func TestEmptyPortsAndGen1Device(t *testing.T) {
	// The values written must be what lspci printed for these ports.
	text := readDumps(t, "empty-slots-x0.lspci")
	for a, w := range map[string]int{"00:01.0": 16, "00:1c.1": 1} {
		s := parseLspci(t, text[a].Text)
		if s.CapSpeed != 5 || s.CapWidth != w || s.StaSpeed != 2.5 {
			t.Fatalf("%s: lspci says %+v", a, s)
		}
	}
	hops, err := Links(bg, option.Root(emptySlotsTree(t, 2.5).dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(hops) != 1 || hops[0].Upstream.Address != "0000:00:1c.1" {
		t.Fatalf("links %+v", hops)
	}
	h := hops[0]
	// A Gen1-only device behind a Gen2 port: lspci says "(downgraded)",
	// nicdiag says nothing is wrong.
	if h.Verdict != VerdictOK || h.SpeedLimitedBy != "device" || len(h.Findings()) != 0 {
		t.Errorf("gen1 device: verdict %s limited by %q findings %v", h.Verdict, h.SpeedLimitedBy, h.Findings())
	}
}

func TestDowngradedWhenBothEndsCanDoMore(t *testing.T) {
	hops, err := Links(bg, option.Root(emptySlotsTree(t, 5).dir))
	if err != nil || len(hops) != 1 {
		t.Fatal(err, hops)
	}
	fs := hops[0].Findings()
	if len(fs) != 1 || fs[0].Code != finding.PCIeLinkDowngraded || fs[0].Severity != finding.Warn {
		t.Fatalf("findings %v", fs)
	}
	want := "0000:03:00.0 runs at 2.5 GT/s x1 though it and its port 0000:00:1c.1 both support 5 GT/s x1: the link trained down"
	if !strings.HasPrefix(fs[0].Summary, want) || !strings.Contains(fs[0].Summary, "need root") {
		t.Errorf("summary %q", fs[0].Summary)
	}
}

// nvmeTree: the Gen5 NVMe dump (32 GT/s x2, trained 16 GT/s) behind a root
// port reconstructed as 32 GT/s x4 (sysfs files only). aspmL1 enables L1 in
// the device's LnkCtl.
func nvmeTree(t testing.TB, aspmL1 bool) *tree {
	cfg := slices.Clone(readDumps(t, "nvme-gen5-at-gen4.lspci")["2e:00.0"].Config)
	if aspmL1 {
		cfg[expressAt(t, cfg)+0x10] |= byte(ASPML1)
	}
	tr := newTree(t)
	tr.add([]string{"pci0000:00", "0000:00:01.1"}, attrs("0x1022", "0x14ab", "0x060400", 16, 2, 32, 4), nil)
	tr.add([]string{"pci0000:00", "0000:00:01.1", "0000:2e:00.0"}, attrsFromConfig(t, cfg), cfg)
	return tr
}

func TestNVMeGen5AtGen4(t *testing.T) {
	p, err := PathTo(bg, "0000:2e:00.0", option.Root(nvmeTree(t, false).dir))
	if err != nil {
		t.Fatal(err)
	}
	h := p.Hops[0]
	if !h.Downgraded || h.IdleDowntrained || h.Speed != 16 || h.CapableSpeed != 32 || h.Width != 2 || h.CapableWidth != 2 {
		t.Errorf("hop %+v", h)
	}
	fs := p.Findings()
	if len(fs) != 1 || fs[0].Code != finding.PCIeLinkDowngraded || fs[0].Evidence["target_speed"] != "32 GT/s" {
		t.Errorf("findings %v", fs)
	}
}

func TestIdleDowntrained(t *testing.T) {
	p, err := PathTo(bg, "0000:2e:00.0", option.Root(nvmeTree(t, true).dir))
	if err != nil {
		t.Fatal(err)
	}
	h := p.Hops[0]
	if h.Downgraded || !h.IdleDowntrained || h.Verdict != VerdictIdleDowntrained {
		t.Errorf("verdict %s downgraded=%v idle=%v", h.Verdict, h.Downgraded, h.IdleDowntrained)
	}
	fs := p.Findings()
	if len(fs) != 1 || fs[0].Code != finding.PCIeIdleDowntrained || fs[0].Severity != finding.Info ||
		!strings.Contains(fs[0].Summary, "may retrain to 32 GT/s under load") {
		t.Errorf("findings %v", fs)
	}
}

func TestRootBusDevices(t *testing.T) {
	virtio := readDumps(t, "virtio-net.lspci")["00:09.0"].Config
	rciep := slices.Clone(readDumps(t, "82576-et-dual.lspci")["01:00.0"].Config)
	rciep[expressAt(t, rciep)+2] = 0x92 // port type 9, version 2
	tr := newTree(t)
	tr.add([]string{"pci0000:00", "0000:00:09.0"}, attrsFromConfig(t, virtio), virtio)
	tr.add([]string{"pci0000:00", "0000:00:19.0"}, attrsFromConfig(t, rciep), rciep)
	for addr, want := range map[string]string{
		"0000:00:09.0": "no upstream port: on root bus 0000:00",
		"0000:00:19.0": "root complex integrated endpoint per PCIe capability port type",
	} {
		p, err := PathTo(bg, Address(addr), option.Root(tr.dir))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Hops) != 0 || p.Architectural != want || len(p.Findings()) != 0 {
			t.Errorf("%s: hops %d architectural %q", addr, len(p.Hops), p.Architectural)
		}
	}
}

// TestVirtualLinkIsArchitectural: virtio behind a QEMU root port, as in the
// ghw KVM snapshot (which has no link files: these are made up to look
// downgraded and slot-limited). No finding, and the hop says why.
func TestVirtualLinkIsArchitectural(t *testing.T) {
	tr := newTree(t)
	tr.add([]string{"pci0000:00", "0000:00:02.0"}, attrs("0x1b36", "0x000c", "0x060400", 2.5, 1, 16, 32), nil)
	tr.add([]string{"pci0000:00", "0000:00:02.0", "0000:01:00.0"}, attrs("0x1af4", "0x1041", "0x020000", 2.5, 1, 32, 32), nil)
	p, err := PathTo(bg, "0000:01:00.0", option.Root(tr.dir))
	if err != nil {
		t.Fatal(err)
	}
	h := p.Hops[0]
	if h.Verdict != VerdictArchitectural || !strings.Contains(h.Reason, "vendor 1af4") || len(p.Findings()) != 0 {
		t.Errorf("verdict %s reason %q findings %v", h.Verdict, h.Reason, p.Findings())
	}
}

func TestThunderboltLinkIsArchitectural(t *testing.T) {
	// Two 4 KiB configs (the 82576 dump, re-identified as Intel bridges)
	// carrying Intel's Thunderbolt VSEC as the first extended capability.
	tbt := func(portType byte) []byte {
		b := slices.Clone(readDumps(t, "82576-et-dual.lspci")["01:00.0"].Config)
		b[expressAt(t, b)+2] = portType<<4 | 2
		binary.LittleEndian.PutUint32(b[0x100:], 0x000b|1<<16)    // VSEC, no next
		binary.LittleEndian.PutUint32(b[0x104:], 0x1234|0x18<<20) // VSEC ID 0x1234
		return b
	}
	down, up := tbt(byte(PortDownstream)), tbt(byte(PortUpstream))
	tr := newTree(t)
	tr.add([]string{"pci0000:00", "0000:00:1d.0"}, attrs("0x8086", "0x1234", "0x060400", 8, 4, 8, 4), nil)
	tr.add([]string{"pci0000:00", "0000:00:1d.0", "0000:05:00.0"}, attrs("0x8086", "0x15da", "0x060400", 8, 4, 8, 4), up)
	tr.add([]string{"pci0000:00", "0000:00:1d.0", "0000:05:00.0", "0000:06:01.0"}, attrs("0x8086", "0x15da", "0x060400", 2.5, 4, 2.5, 4), down)
	tr.add([]string{"pci0000:00", "0000:00:1d.0", "0000:05:00.0", "0000:06:01.0", "0000:07:00.0"}, attrs("0x8086", "0x15da", "0x060400", 2.5, 1, 8, 4), up)
	p, err := PathTo(bg, "0000:07:00.0", option.Root(tr.dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hops) != 2 || p.Hops[0].Verdict != VerdictArchitectural || !strings.Contains(p.Hops[0].Reason, "Thunderbolt") {
		t.Fatalf("hops %+v", p.Hops)
	}
	if p.Hops[1].Verdict != VerdictOK {
		t.Errorf("host link verdict %s", p.Hops[1].Verdict)
	}
}

// ryzenTree is the AMD desktop of the ghw snapshot: NICs behind the chipset
// switch 01:00.2 / 02:0x.0 on root port 00:01.3. ghw captured no link or
// config files, so there are none here.
func ryzenTree(t testing.TB) *tree {
	tr := newTree(t)
	base := []string{"pci0000:00", "0000:00:01.3"}
	add := func(path []string, class string) {
		tr.add(append(slices.Clone(base), path...), map[string]string{"class": class}, nil)
	}
	tr.add(base, map[string]string{"class": "0x060400"}, nil)
	add([]string{"0000:01:00.2"}, "0x060400")
	for _, d := range []string{"0000:02:00.0", "0000:02:04.0", "0000:02:06.0"} {
		add([]string{"0000:01:00.2", d}, "0x060400")
	}
	add([]string{"0000:01:00.2", "0000:02:00.0", "0000:03:00.0"}, "0x020000")
	add([]string{"0000:01:00.2", "0000:02:04.0", "0000:06:00.0"}, "0x020000")
	add([]string{"0000:01:00.2", "0000:02:04.0", "0000:06:00.1"}, "0x020000")
	add([]string{"0000:01:00.2", "0000:02:06.0", "0000:08:00.0"}, "0x020000")
	return tr
}

func TestPathThroughSwitchSharesUplink(t *testing.T) {
	p, err := PathTo(bg, "0000:06:00.1", option.Root(ryzenTree(t).dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hops) != 2 {
		t.Fatalf("hops %+v", p.Hops)
	}
	ends := fmt.Sprintf("%s>%s %s>%s", p.Hops[0].Upstream.Address, p.Hops[0].Downstream.Address, p.Hops[1].Upstream.Address, p.Hops[1].Downstream.Address)
	if ends != "0000:02:04.0>0000:06:00.1 0000:00:01.3>0000:01:00.2" {
		t.Errorf("hops %s", ends)
	}
	nics := func(h Hop) []string {
		var a []string
		for _, f := range h.Functions {
			if f.Network {
				a = append(a, string(f.Address))
			}
		}
		return a
	}
	if got := nics(p.Hops[0]); !slices.Equal(got, []string{"0000:06:00.0", "0000:06:00.1"}) {
		t.Errorf("card link shared by %q", got)
	}
	if got := nics(p.Hops[1]); !slices.Equal(got, []string{"0000:03:00.0", "0000:06:00.0", "0000:06:00.1", "0000:08:00.0"}) {
		t.Errorf("chipset uplink shared by %q", got)
	}
	if len(p.Hops[1].Functions) != 8 {
		t.Errorf("uplink functions %+v", p.Hops[1].Functions)
	}
	for _, h := range p.Hops {
		if h.Verdict != VerdictUnknown || len(h.Findings()) != 0 {
			t.Errorf("no link files: verdict %s", h.Verdict)
		}
	}
	hops, err := Links(bg, option.Root(ryzenTree(t).dir))
	if err != nil || len(hops) != 4 {
		t.Errorf("links: %v, %d", err, len(hops))
	}
}

func TestVirtualFunctionUsesPhysicalFunctionLink(t *testing.T) {
	tr := motivatingTree(t, false)
	vf := []string{"pci0000:00", "0000:00:1c.1", "0000:01:10.0"}
	tr.add(vf, map[string]string{"class": "0x020000", "vendor": "0x8086", "device": "0x10ca", "current_link_speed": "Unknown", "current_link_width": "0"}, nil)
	tr.link("sys/devices/"+strings.Join(vf, "/")+"/physfn", "../0000:01:00.0")
	p, err := PathTo(bg, "0000:01:10.0", option.Root(tr.dir))
	if err != nil {
		t.Fatal(err)
	}
	h := p.Hops[0]
	if h.Downstream.Address != "0000:01:00.0" || h.Verdict != VerdictSlotLimited || len(h.Notes) != 1 {
		t.Errorf("downstream %s verdict %s notes %q", h.Downstream.Address, h.Verdict, h.Notes)
	}
	if p.Device.Address != "0000:01:10.0" || p.Device.PhysFn != "0000:01:00.0" {
		t.Errorf("device %+v", p.Device)
	}
}

func TestPathErrors(t *testing.T) {
	tr := motivatingTree(t, false)
	if _, err := PathTo(bg, "0000:09:00.0", option.Root(tr.dir)); !errors.Is(err, ErrNotFound) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent: %v, want ErrNotFound and os.ErrNotExist", err)
	}
	if _, err := PathTo(bg, "0000:01:00.0/../x", option.Root(tr.dir)); !errors.Is(err, ErrBadAddress) {
		t.Errorf("bad: %v", err)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := PathTo(ctx, "0000:01:00.0", option.Root(tr.dir)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := Links(ctx, option.Root(tr.dir)); !errors.Is(err, context.Canceled) {
		t.Errorf("links cancelled: %v", err)
	}
	// A device link that escapes the snapshot is refused, not followed.
	tr.link("sys/bus/pci/devices/0000:0a:00.0", "../../../../../../etc")
	if _, err := PathTo(bg, "0000:0a:00.0", option.Root(tr.dir)); err == nil {
		t.Error("escaping link followed")
	}
}

func TestPathJSONFieldNames(t *testing.T) {
	p, err := PathTo(bg, "0000:01:00.0", option.Root(motivatingTree(t, false).dir), WithNamer(func(v, d uint16) string {
		return fmt.Sprintf("%04x:%04x", v, d)
	}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	hop := m["hops"].([]any)[0].(map[string]any)
	for _, k := range []string{"upstream", "downstream", "speed_gts", "width", "capable_speed_gts", "capable_width", "functions", "verdict", "slot_limited"} {
		if _, ok := hop[k]; !ok {
			t.Errorf("hop JSON lacks %q: %s", k, b)
		}
	}
	down := hop["downstream"].(map[string]any)
	if down["name"] != "8086:10c9" || down["mps"] != 256.0 || down["port_type"] != "endpoint" {
		t.Errorf("downstream JSON %v", down)
	}
	x := down["config"].(map[string]any)["express"].(map[string]any)
	if x["aspm_enabled"] != "L1" || x["port_type"] != "endpoint" {
		t.Errorf("express JSON %v", x)
	}
}

// bigTree: 8 root ports, each with a switch of 8 downstream ports, each
// holding a dual-port 82576 (the real 4 KiB config): 208 functions.
func bigTree(b testing.TB) *tree {
	card := readDumps(b, "82576-et-dual.lspci")["01:00.0"].Config
	port := readDumps(b, "connectx3pro-haswell.lspci")["00:02.0"].Config
	ca, pa := attrsFromConfig(b, card), attrsFromConfig(b, port)
	// The switch ports reuse the root port's bytes with their port type.
	typed := func(pt PortType) []byte {
		c := slices.Clone(port)
		c[expressAt(b, c)+2] = byte(pt)<<4 | 2
		return c
	}
	upCfg, downCfg := typed(PortUpstream), typed(PortDownstream)
	tr := newTree(b)
	bus := 1
	for r := 0; r < 8; r++ {
		rp := []string{"pci0000:00", fmt.Sprintf("0000:00:%02x.0", r+1)}
		tr.add(rp, pa, port)
		up := append(slices.Clone(rp), fmt.Sprintf("0000:%02x:00.0", bus))
		tr.add(up, pa, upCfg)
		bus++
		sw := bus
		bus++
		for d := 0; d < 8; d++ {
			dp := append(slices.Clone(up), fmt.Sprintf("0000:%02x:%02x.0", sw, d))
			tr.add(dp, pa, downCfg)
			for fn := 0; fn < 2; fn++ {
				tr.add(append(slices.Clone(dp), fmt.Sprintf("0000:%02x:00.%d", bus, fn)), ca, card)
			}
			bus++
		}
	}
	return tr
}

func BenchmarkLinks(b *testing.B) {
	dir := bigTree(b).dir
	b.ResetTimer()
	for b.Loop() {
		hops, err := Links(bg, option.Root(dir))
		if err != nil || len(hops) != 8+64 {
			b.Fatal(err, len(hops))
		}
	}
}

func BenchmarkPathTo(b *testing.B) {
	dir := bigTree(b).dir
	b.ResetTimer()
	for b.Loop() {
		p, err := PathTo(bg, "0000:03:00.1", option.Root(dir))
		if err != nil || len(p.Hops) != 2 {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeConfig(b *testing.B) {
	cfg := readDumps(b, "82576-et-dual.lspci")["01:00.0"].Config
	for b.Loop() {
		if _, err := DecodeConfig(cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// A read deadline in the past stops the walk at once with an error matching
// context.DeadlineExceeded; none leaves the path as it was.
func TestPathToReadDeadline(t *testing.T) {
	dir := filepath.Join("..", "testdata", "snapshots", "82576-minipcie-x1")
	ctx := context.Background()
	p, err := PathTo(ctx, "0000:01:00.0", option.Root(dir), option.ReadDeadline(time.Now().Add(-time.Second)))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("PathTo past its deadline = %+v, %v; want context.DeadlineExceeded", p, err)
	}
	p, err = PathTo(ctx, "0000:01:00.0", option.Root(dir), option.ReadDeadline(time.Now().Add(time.Hour)))
	if err != nil || len(p.Hops) == 0 {
		t.Errorf("PathTo = %+v, %v", p, err)
	}
}

// The entry chipsets the family rows cannot tell apart by root-port ID
// are named in the row's note: H110's DMI 2.0 x4, H310's unconfirmed one.
func TestChipsetEntryNotes(t *testing.T) {
	for dev, want := range map[uint16]string{0xa114: "DMI 2.0 x4 (5 GT/s) on H110", 0xa168: "on H110", 0xa33c: "H310"} {
		r, ok := chipsetOf(0x8086, dev, 0x060400)
		if !ok || r.link != "DMI 3.0 x4" || !strings.Contains(r.note, want) {
			t.Errorf("%04x: %+v, want DMI 3.0 x4 noting %q", dev, r, want)
		}
	}
}
