package exporter

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
)

// families lists the families every bundled snapshot's exposition has
// among them; allFamilies adds the host audit's.
var families = []*family{famChecks, famErrors, famSeconds, famInfo, famSpeed, famHopSpeed, famHopWidth, famCeiling, famDemand, famFinding, famQueueCPU, famUp}

// bundledSnapshots lists the snapshot trees under testdata/snapshots.
func bundledSnapshots(t *testing.T) []string {
	t.Helper()
	const dir = "../testdata/snapshots"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && e.Name() != "src" {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d snapshots under %s", len(out), dir)
	}
	return out
}

// Over every bundled snapshot, the exposition carries every finding nicdiag
// check returns (code, severity, subject) and an info series for every NIC
// it judged, functions without a netdev included; no series appears twice;
// and over all of them every metric family the collector knows shows up
// somewhere.
func TestEverySnapshotFullyExported(t *testing.T) {
	seen := map[string]bool{}
	noNetdev := 0 // functions without a netdev, exported under their PCI address
	for _, snap := range bundledSnapshots(t) {
		name := filepath.Base(snap)
		r, err := nicdiag.Check(context.Background(), option.Root(snap))
		if err != nil {
			t.Errorf("%s: check: %v", name, err)
			continue
		}
		text := exposition(t, New(option.Root(snap)))
		if d := duplicateSeries(text); d != "" {
			t.Errorf("%s: series %s appears twice", name, d)
		}
		series := map[string][]map[string]string{}
		for _, f := range parse(t, bytes.NewReader(text)) {
			seen[f.GetName()] = true
			for _, m := range f.GetMetric() {
				series[f.GetName()] = append(series[f.GetName()], labels(m))
			}
		}
		has := func(metric string, want map[string]string) bool {
		next:
			for _, l := range series[metric] {
				for k, v := range want {
					if l[k] != v {
						continue next
					}
				}
				return true
			}
			return false
		}
		if len(series["nicdiag_up"]) != 1 {
			t.Errorf("%s: no nicdiag_up", name)
		}
		for _, f := range r.Findings {
			want := map[string]string{"code": string(f.Code), "severity": f.Severity.String(), "subject": f.Subject}
			if !has("nicdiag_finding", want) {
				t.Errorf("%s: finding %v not exported", name, want)
			}
		}
		if got, want := len(series["nicdiag_finding"]), len(r.Findings); got != want {
			t.Errorf("%s: %d nicdiag_finding series for %d findings", name, got, want)
		}
		for _, n := range r.Host.Selected {
			id := n.ID()
			if !has("nicdiag_nic_info", map[string]string{"iface": id}) {
				t.Errorf("%s: no nicdiag_nic_info for %s", name, id)
			}
			if n.Budget != nil && !has("nicdiag_ceiling_bytes_per_second", map[string]string{"iface": id, "estimate": "nominal"}) {
				t.Errorf("%s: no nominal ceiling for %s", name, id)
			}
			if n.Name == "" {
				noNetdev++
			}
		}
	}
	if noNetdev == 0 {
		t.Error("no bundled snapshot has a function without a netdev")
	}
	for _, want := range []string{"nicdiag_up", "nicdiag_nic_info", "nicdiag_nic_link_speed_bytes_per_second",
		"nicdiag_pcie_hop_speed_transfers_per_second", "nicdiag_pcie_hop_width_lanes", "nicdiag_ceiling_bytes_per_second",
		"nicdiag_line_rate_bytes_per_second", "nicdiag_finding", "nicdiag_queue_irq_effective_cpu",
		"nicdiag_checks_total", "nicdiag_check_errors_total", "nicdiag_check_duration_seconds"} {
		if !seen[want] {
			t.Errorf("no bundled snapshot exports %s", want)
		}
	}
	for _, f := range families {
		if !seen[f.name] {
			t.Errorf("metric %s appears in no bundled snapshot", f.name)
		}
	}
}

// duplicateSeries returns the first series line (name and labels) of an
// exposition that appears twice, or "".
func duplicateSeries(text []byte) string {
	seen := map[string]bool{}
	for _, line := range strings.Split(string(text), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key := line[:strings.LastIndexByte(line, ' ')]
		if seen[key] {
			return key
		}
		seen[key] = true
	}
	return ""
}

// Every HELP text says what its series carry: it is more than a few words
// and names its unit where the name has one.
func TestHelpTexts(t *testing.T) {
	for _, f := range allFamilies {
		help, name := f.help, f.name
		if len(strings.Fields(help)) < 6 {
			t.Errorf("%s: HELP %q is too short to say what the series carry", name, help)
		}
		for suffix, unit := range map[string]string{"_bytes_per_second": "bytes per second", "_seconds": "seconds", "_transfers_per_second": "transfers per second", "_lanes": "lanes"} {
			if strings.HasSuffix(name, suffix) && !strings.Contains(help, unit) {
				t.Errorf("%s: HELP %q does not name its unit (%s)", name, help, unit)
			}
		}
	}
}

// nonRoot rewrites a copy of snapshot dir as an unprivileged reader sees
// it: every PCI config space cut to its 64-byte header (pci_read_config in
// drivers/pci/pci-sysfs.c gives no more without CAP_SYS_ADMIN).
func nonRoot(t *testing.T, dir string) string {
	t.Helper()
	dst := snaptest.Copy(t, dir)
	err := filepath.WalkDir(filepath.Join(dst, "sys", "devices"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "config" || !d.Type().IsRegular() {
			return err
		}
		if fi, err := d.Info(); err != nil || fi.Size() <= 64 {
			return err
		}
		return os.Truncate(p, 64)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return dst
}

// seriesOf returns every sample of a gather as "name{labels}" → value,
// without the check's wall time.
func seriesOf(t *testing.T, c *Collector) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, f := range parse(t, bytes.NewReader(exposition(t, c))) {
		if f.GetName() == "nicdiag_check_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			out[f.GetName()+"{"+strings.Join(ls, ",")+"}"] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return out
}

// What needs root: over every bundled snapshot, the exposition an
// unprivileged reader gets has the same series as root's, and the same
// values but for the ceilings, which assume MPS 128 when DevCtl is out of
// reach (the CCR2004's 256-byte MPS: 6.50 → 6.00 GB/s nominal). The
// deploy/systemd unit grants CAP_SYS_ADMIN for that.
func TestNonRootView(t *testing.T) {
	changed := map[string]bool{}
	incomplete := 0
	for _, snap := range bundledSnapshots(t) {
		name := filepath.Base(snap)
		root, user := seriesOf(t, New(option.Root(snap))), seriesOf(t, New(option.Root(nonRoot(t, snap))))
		for k, v := range root {
			u, ok := user[k]
			switch {
			case !ok:
				t.Errorf("%s: %s only with root", name, k)
			case u != v && !strings.HasPrefix(k, "nicdiag_ceiling_bytes_per_second{"):
				t.Errorf("%s: %s = %g with root, %g without", name, k, v, u)
			case u != v:
				changed[name] = true
				if u > v {
					t.Errorf("%s: %s rises without root (%g → %g): MPS 128 is the conservative guess", name, k, v, u)
				}
			}
		}
		for k := range user {
			if _, ok := root[k]; !ok {
				// The one verdict a reader without root adds: nicdiag.incomplete
				// at info, saying what the 64-byte config header weakens.
				if strings.Contains(k, "code=nicdiag.incomplete,severity=info,") {
					incomplete++
					continue
				}
				t.Errorf("%s: %s only without root", name, k)
			}
		}
	}
	if incomplete == 0 {
		t.Error("no snapshot says, without root, that its config space was cut to the header (nicdiag.incomplete)")
	}
	// The CCR2004 on a 2.5 GT/s x1 link is PCIe-bound, so its ceiling
	// rests on the MPS (256 in DevCtl) that only root can read.
	if !changed["ccr2004-gen1-x1"] {
		t.Error("the PCIe-bound CCR2004 ceilings (MPS 256 in DevCtl) are the same without root")
	}
	t.Logf("ceilings that differ without root: %v", changed)
}
