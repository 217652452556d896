package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
)

const snaps = "../../testdata/snapshots/"

// runCLI runs the CLI in-process and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestCheckExitCodes(t *testing.T) {
	cases := []struct {
		snap string
		want int
	}{
		{"82576-minipcie-x1", exitWarn},  // pcie.bottleneck at 73% of demand
		{"ccr2004-host", exitWarn},       // nic.misidentified
		{"connectx3pro-haswell", exitOK}, // healthy Gen3 x8, multi-queue
		{"empty-ports-x0", exitOK},       // no NIC at all
		{"nvme-gen5-at-gen4", exitOK},    // a downgraded link, but not a NIC's
		{"does-not-exist", exitFail},     // nicdiag itself fails
	}
	for _, c := range cases {
		_, stderr, code := runCLI(t, "--root", snaps+c.snap, "check")
		if code != c.want {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.snap, code, c.want, stderr)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	out, _, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "check", "--json")
	var doc struct {
		Schema     string            `json:"schema"`
		Interfaces []string          `json:"interfaces"`
		Findings   []finding.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	if doc.Schema != jsonSchema || len(doc.Interfaces) != 2 || len(doc.Findings) == 0 {
		t.Fatalf("doc = %+v", doc)
	}
	if code != exitFor(doc.Findings) {
		t.Errorf("exit %d does not follow the findings", code)
	}
	f := doc.Findings[0]
	if f.Code != finding.PCIeBottleneck || f.CapacityMbps == nil || f.DemandMbps == nil || *f.CapacityMbps >= *f.DemandMbps {
		t.Errorf("first finding = %+v, want pcie.bottleneck with capacity < demand", f)
	}
}

func TestCheckUnknownInterface(t *testing.T) {
	_, stderr, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "check", "nosuch0")
	if code != exitFail || !strings.Contains(stderr, "nosuch0") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestExplainText(t *testing.T) {
	out, _, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "explain", "enp1s0f0")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"1974 Mb/s", "1435 Mb/s (1367–1488)", "PCIe-bound at the link of 0000:00:1c.0", "port-limited (speed by device, width by port)", "2.5 GT/s x1"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
}

// TestExplainOutputItems: what an expert reading explain would flag. A
// link that trained below what both its ends support is named so, not
// "device-limited"; the AR8151's DMA profile does not cite a router card;
// an emulated e1000's or e1000e's nominal 1000 Mb/s is no line rate; --port-speed 2.5
// reads 2.5 Mb/s.
func TestExplainOutputItems(t *testing.T) {
	for _, c := range []struct {
		snap, iface string
		args        []string
		want, not   []string
	}{
		{"ccr2004-gen1-x1", "enp1s0f0", nil,
			[]string{"trained down: it runs at 2.5 GT/s x1 where both ends support 8 GT/s x8", "pcie.link_downgraded"},
			[]string{"device-limited", "port-limited"}},
		{"ar8151-desktop", "enp3s0", nil, []string{"DMA profile basis: assumed for atl1c"}, []string{"CCR2004"}},
		{"qemu-lab-links", "eth0", nil,
			[]string{"eth0 is an emulated NIC", "no physical ceiling known"}, []string{"987 Mb/s", "Ethernet-bound"}},
		// QEMU's e1000e keeps Intel's subsystem vendor (8086:0000): the
		// QEMU guest's DMI marks it emulated, its 1000 Mb/s nominal too.
		{"qemu-lab-links", "eth1", nil,
			[]string{"eth1 is an emulated NIC", "no physical ceiling known"}, []string{"987 Mb/s", "Ethernet-bound", "emulated link:"}},
		{"qemu-lab-links", "eth0", []string{"--port-speed", "2.5"},
			[]string{"1 port(s) at 2.5 Mb/s", "Ceiling: 2.5 Mb/s of frames per direction"}, []string{"3 Mb/s"}},
	} {
		args := append(append([]string{"--root", snaps + c.snap, "explain"}, c.args...), c.iface)
		out, stderr, code := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", args, w, out)
			}
		}
		for _, w := range c.not {
			if strings.Contains(out, w) {
				t.Errorf("%v: output says %q:\n%s", args, w, out)
			}
		}
	}
}

func TestExplainJSONFields(t *testing.T) {
	out, _, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "explain", "--json", "--direction", "rx", "--frame-size", "64", "enp1s0f0")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ceiling_mbps", "bound", "ethernet_mbps", "pcie_mbps", "limiting_hop", "at_capability_mbps", "workload"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("explain JSON lacks %q (docs/design.md §3)", k)
		}
	}
	w := doc["workload"].(map[string]any)
	if w["direction"] != "rx" || w["frame_bytes"].(float64) != 64 {
		t.Errorf("workload = %v, want rx at 64 bytes", w)
	}
}

func TestExplainBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"explain"},
		{"explain", "--direction", "sideways", "enp1s0f0"},
		{"explain", "--frame-size", "10", "enp1s0f0"},
		{"explain", "nosuch0"},
	} {
		_, stderr, code := runCLI(t, append([]string{"--root", snaps + "82576-minipcie-x1"}, args...)...)
		if code != exitFail || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 3 with a message", args, code, stderr)
		}
	}
}

// list carries the identity verdicts (issue: show, list and check).
func TestListNotes(t *testing.T) {
	for snap, want := range map[string]string{"ccr2004-host": "misidentified", "virtio-kvm": "virtual", "xeon-i350-sriov-bcm5709": "vf"} {
		out, _, code := runCLI(t, "--root", snaps+snap, "list")
		if code != exitOK || !strings.Contains(out, "  "+want+"  ") {
			t.Errorf("%s: exit %d, no %q note:\n%s", snap, code, want, out)
		}
	}
	out, _, _ := runCLI(t, "--root", snaps+"ar8151-desktop", "list")
	if strings.Contains(out, "misidentified") {
		t.Errorf("a genuine AR8151 is noted as misidentified:\n%s", out)
	}
}

func TestIsTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Error("/dev/null (a character device) taken for a terminal")
	}
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer taken for a terminal")
	}
}

func TestShowPCIFunctionWithoutNetdev(t *testing.T) {
	_, stderr, code := runCLI(t, "--root", snaps+"i350-dpdk-vfio", "show", "0000:01:00.1")
	if code != exitFail || !strings.Contains(stderr, "explain 0000:01:00.1") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// A check family that could not run does not look clean: with
// /proc/interrupts unparseable (a directory) a tree that passes exits 1,
// and says what was not checked.
func TestCheckIncompleteExit(t *testing.T) {
	root := snaptest.Copy(t, snaps+"i350-minipcie-x1")
	if _, _, code := runCLI(t, "--root", root, "check"); code != exitOK {
		t.Fatalf("intact tree: exit %d, want 0", code)
	}
	p := filepath.Join(root, "proc/interrupts")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "--root", root, "check", "enp1s0f0")
	if code != exitWarn || !strings.Contains(out, "WARN  nicdiag.incomplete  host") || !strings.Contains(out, "/proc/interrupts") {
		t.Errorf("exit %d, want 1\n%s%s", code, out, stderr)
	}
}
