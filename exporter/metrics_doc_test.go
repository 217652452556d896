package exporter

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/option"
)

// hostFamilies are the families of the host audit (series_host.go);
// allFamilies every family the exporter defines.
var (
	hostFamilies = []*family{famShared, famIdle, famConntrack, famConntrackStat, famBridgeNF, famXDP, famTunnel,
		famLinkErr, famFEC, famModTemp, famModVolt, famModBias, famModPower, famPause, famAllowance}
	allFamilies = append(slices.Clone(families), hostFamilies...)
)

// docRow is one series of docs/metrics.md.
type docRow struct {
	kind   string
	labels []string
}

// metricsDoc reads docs/metrics.md's tables: name, type, labels.
func metricsDoc(t *testing.T) map[string]docRow {
	t.Helper()
	b, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]docRow{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `nicdiag_") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			t.Fatalf("docs/metrics.md: row %q", line)
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		var labels []string
		for _, l := range strings.Split(cells[3], ",") {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" {
				labels = append(labels, l)
			}
		}
		if _, dup := rows[name]; dup {
			t.Errorf("docs/metrics.md lists %s twice", name)
		}
		rows[name] = docRow{kind: strings.TrimSpace(cells[2]), labels: labels}
	}
	return rows
}

// docs/metrics.md lists every family the exporter defines, with its type
// and labels, and nothing else; and every series the exporter emits over
// the bundled snapshots is a family it lists.
func TestMetricsDocumented(t *testing.T) {
	rows := metricsDoc(t)
	known := map[string]bool{}
	for _, f := range allFamilies {
		known[f.name] = true
		r, ok := rows[f.name]
		switch {
		case !ok:
			t.Errorf("docs/metrics.md does not list %s", f.name)
		case r.kind != f.kind:
			t.Errorf("docs/metrics.md: %s is a %s, the exporter's a %s", f.name, r.kind, f.kind)
		case !slices.Equal(slices.Sorted(slices.Values(r.labels)), slices.Sorted(slices.Values(f.labels))):
			t.Errorf("docs/metrics.md: %s has labels %v, the exporter's %v", f.name, r.labels, f.labels)
		}
	}
	for name := range rows {
		if !known[name] {
			t.Errorf("docs/metrics.md lists %s, which the exporter does not define", name)
		}
	}
	for _, snap := range bundledSnapshots(t) {
		for name := range parse(t, bytes.NewReader(exposition(t, New(option.Root(snap))))) {
			if !known[name] {
				t.Errorf("%s: the exporter emits %s, which allFamilies does not hold", snap, name)
			}
			if _, ok := rows[name]; !ok {
				t.Errorf("%s: the exporter emits %s, which docs/metrics.md does not list", snap, name)
			}
		}
	}
}
