package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
)

func TestShowGolden(t *testing.T) {
	for _, c := range []struct{ snap, iface string }{
		{"xeon-i350-sriov-bcm5709", "enp5s16f5"},
		{"xeon-i350-sriov-bcm5709", "enp5s0f1"},
		{"ccr2004-host", "enp1s0f0"},
		{"virtio-kvm", "eth0"},
		{"qemu-lab-igb-vfs", "eth0"},
		{"qemu-lab-links", "eth3"},
	} {
		t.Run(c.snap+"/"+c.iface, func(t *testing.T) {
			root := snapWithIDs(t, c.snap)
			out, stderr, code := runCLI(t, "--root", root, "show", c.iface)
			if code == exitFail {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, "show-"+c.snap+"-"+c.iface+".txt", out)
			out, _, _ = runCLI(t, "--root", root, "show", "--json", c.iface)
			golden(t, "show-"+c.snap+"-"+c.iface+".json", out)
			var doc showJSON
			if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Schema != jsonSchema || doc.NIC.Name != c.iface {
				t.Errorf("JSON %v: %+v", err, doc)
			}
			if code != exitFor(doc.Findings) {
				t.Errorf("exit %d does not follow the findings %v", code, doc.Findings)
			}
			if doc.NIC.PCI != nil && doc.Path == nil {
				t.Error("a PCI NIC's show has no PCIe path")
			}
		})
	}
}

func TestShowUnknown(t *testing.T) {
	_, stderr, code := runCLI(t, "--root", snaps+"virtio-kvm", "show", "nope0")
	if code != exitFail || !strings.Contains(stderr, `"nope0": no such network interface`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	_, _, code = runCLI(t, "show")
	if code != exitFail {
		t.Errorf("show without IFACE: exit %d", code)
	}
}

// Appended sections come after the inventory ones.
func TestRenderShowExtra(t *testing.T) {
	var b strings.Builder
	n := &nicinfo.NIC{Name: "x0", Bus: nicinfo.BusVirtual, Link: nicinfo.Link{SpeedMbps: nicinfo.SpeedUnknown}}
	err := renderShow(&b, n, showSection{Title: "Findings", Rows: [][2]string{{"pcie.bottleneck", "warn"}}})
	if err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if i, j := strings.Index(s, "Identity:"), strings.Index(s, "Findings:"); i < 0 || j < i || !strings.Contains(s, "Speed:            unknown") && !strings.Contains(s, "unknown") {
		t.Errorf("sections out of order:\n%s", s)
	}
}

func TestShowHelp(t *testing.T) {
	out, _, code := runCLI(t, "help", "show")
	if code != exitOK || !strings.Contains(out, "nicdiag show eth0") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// enrich adds the ethtool answers of a newer snapshot (rings, offloads,
// coalescing, EEE, pause, the partner's modes, driver loss counters) to
// iface's ethtool/IFACE.json in the snapshot copy at root; edit changes the
// document before it is written.
func enrich(t *testing.T, root, iface string, edit func(map[string]any)) {
	t.Helper()
	p := filepath.Join(root, "ethtool", iface+".json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var more map[string]any
	if err := json.Unmarshal([]byte(`{
		"rings": {"rx": 256, "tx": 256, "rx_max": 4096, "tx_max": 4096},
		"features": {"rx-gro": {"active": true, "requested": true}, "rx-lro": {"active": false, "fixed": true},
			"tx-tcp-segmentation": {"active": false, "requested": true}, "rx-checksum": {"active": true, "requested": true}},
		"coalesce": {"rx_usecs": 3, "tx_usecs": 3, "adaptive_rx": false, "source": "netlink"},
		"eee": {"active": true, "enabled": true, "tx_lpi_enabled": true, "tx_lpi_timer_us": 17},
		"pause": {"autoneg": true, "rx": true, "tx": false},
		"loss_stats": {"rx_no_buffer_count": 12, "tx_dropped": 1}
	}`), &more); err != nil {
		t.Fatal(err)
	}
	for k, v := range more {
		doc[k] = v
	}
	doc["link"].(map[string]any)["partner_advertised"] = []any{"100baseT/Full", "1000baseT/Full"}
	if edit != nil {
		edit(doc)
	}
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The facts of a newer snapshot's ethtool answers each get a line.
func TestShowEthtoolFacts(t *testing.T) {
	root := snapWithIDs(t, "xeon-i350-sriov-bcm5709")
	enrich(t, root, "enp5s0f1", nil)
	out, stderr, code := runCLI(t, "--root", root, "show", "enp5s0f1")
	if code == exitFail {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "show-enriched-enp5s0f1.txt", out)
}

// Hostile names in the new fields print no terminal control character:
// an offload and a driver loss counter (the reader keeps only the names it
// knows, so these are dropped), a coalescing source and a partner mode
// (which reach the output, cleaned).
func TestShowFactsHostile(t *testing.T) {
	root := snapWithIDs(t, "xeon-i350-sriov-bcm5709")
	const evil = "\x1b]0;pwn\x07\x1b[2J\u009b31m\u202e"
	enrich(t, root, "enp5s0f1", func(doc map[string]any) {
		e := evil
		doc["features"].(map[string]any)["rx-gro"+e] = map[string]any{"active": true}
		doc["loss_stats"].(map[string]any)["rx_no_buffer_count"+e] = 7
		doc["coalesce"].(map[string]any)["source"] = "netlink" + e
		doc["link"].(map[string]any)["partner_advertised"] = []any{"1000baseT/Full" + e}
	})
	out, stderr, code := runCLI(t, "--root", root, "show", "enp5s0f1")
	if code == exitFail {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, r := range out {
		if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x202e) {
			t.Fatalf("control character %U in show output:\n%q", r, out)
		}
	}
	if !strings.Contains(out, "Offloads:") || !strings.Contains(out, "Partner modes:    1000baseT/Full]0;pwn") ||
		!strings.Contains(out, "(netlink]0;pwn") {
		t.Errorf("the hostile answer lost its lines:\n%s", out)
	}
}

// The host section: platform, forwarding, and the frequency scaling of the
// CPUs the NIC's IRQs land on, cleaned of control characters.
func TestHostSection(t *testing.T) {
	on, off := true, false
	h := &nicdiag.Host{
		Platform:   nicinfo.Platform{CPUs: 4},
		Forwarding: &nicinfo.Forwarding{IPv4: &on, IPv6: &off},
		CPUs: &irq.CPUs{CPUs: []irq.CPU{
			{ID: 0, Siblings: []int{0, 2}, Governor: "performance"},
			{ID: 1, Siblings: []int{1, 3}, Governor: "powersave\x1b[2J", EPP: "balance_power"},
			{ID: 2, Siblings: []int{0, 2}, Governor: "performance"},
			{ID: 3, Siblings: []int{1, 3}},
		}},
	}
	q := &irq.NICQueues{Queues: []irq.QueueIRQ{{IRQ: 30, CPUs: []int{0}}, {IRQ: 31, CPUs: []int{1, 2}}}}
	var b strings.Builder
	if err := renderSections(&b, []showSection{hostSection(h, q)}); err != nil {
		t.Fatal(err)
	}
	want := `Host:
 Platform:   no virtual machine seen (no hypervisor CPU flag)
 Forwarding: ipv4 on, ipv6 off
 IRQ CPUs:   0-2 (2 cores): governor performance on 0,2; governor powersave[2J, EPP balance_power on 1
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if s := platformText(nicinfo.Platform{}); s != "" {
		t.Errorf("nothing read: %q", s)
	}
	if s := hostSection(&nicdiag.Host{}, q); len(s.Rows) != 0 {
		t.Errorf("nothing read: %v", s.Rows)
	}
}
