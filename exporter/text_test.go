package exporter

import (
	"bytes"
	"flag"
	"math"
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/nicdiag/nicdiag/option"
)

var update = flag.Bool("update", false, "rewrite testdata/*.prom from the current exposition")

// The seed snapshot's exposition, byte for byte but the check's wall time.
// testdata/82576-minipcie-x1.prom was first written by client_golang 1.25's
// text encoder: families, HELP, TYPE, label order, series order and values
// are as it wrote them.
func TestExpositionGolden(t *testing.T) {
	const golden = "testdata/82576-minipcie-x1.prom"
	got := exposition(t, New(option.Root(seed)))
	got = regexp.MustCompile(`(?m)^(nicdiag_check_duration_seconds) \S+$`).ReplaceAll(got, []byte("$1 DURATION"))
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("exposition differs from %s (go test -update to rewrite it):\n%s", golden, got)
	}
}

// Values are written as Prometheus' text encoder writes them.
func TestAppendValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1, "-1"}, {27, "27"}, {0.5, "0.5"},
		{123456, "123456"}, {1234567, "1.234567e+06"}, {1.25e8, "1.25e+08"}, {2.5e9, "2.5e+09"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {0.02620882, "0.02620882"}, {1.7940658400437894e+08, "1.7940658400437894e+08"},
		{math.NaN(), "NaN"}, {math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"}, {math.MaxFloat64, "1.7976931348623157e+308"},
	} {
		if got := string(appendValue(nil, c.v)); got != c.want {
			t.Errorf("appendValue(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// Label values escape \, " and line feeds; HELP escapes \ and line feeds;
// bytes that are not UTF-8 become U+FFFD. Prometheus' parser reads back
// what was meant.
func TestRenderEscapes(t *testing.T) {
	f := newFamily("nicdiag_test_escapes", "gauge", "HELP with a \\ backslash,\na line feed and \"quotes\".", "b", "a")
	text := render([]sample{{f: f, values: []string{"q\"uote\\back\nline", "bad\xffbyte"}, v: math.Inf(1)}})
	want := "# HELP nicdiag_test_escapes HELP with a \\\\ backslash,\\na line feed and \"quotes\".\n" +
		"# TYPE nicdiag_test_escapes gauge\n" +
		"nicdiag_test_escapes{a=\"bad\uFFFDbyte\",b=\"q\\\"uote\\\\back\\nline\"} +Inf\n"
	if string(text) != want {
		t.Fatalf("render:\n%s\nwant:\n%s", text, want)
	}
	m := parse(t, bytes.NewReader(text))["nicdiag_test_escapes"]
	if m.GetHelp() != "HELP with a \\ backslash,\na line feed and \"quotes\"." {
		t.Errorf("HELP reads back as %q", m.GetHelp())
	}
	l := labels(m.GetMetric()[0])
	if l["b"] != "q\"uote\\back\nline" || l["a"] != "bad\uFFFDbyte" || !math.IsInf(m.GetMetric()[0].GetGauge().GetValue(), 1) {
		t.Errorf("series reads back as %v %v", l, m.GetMetric()[0])
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
}

// Families are sorted by name, labels by name, series by their label
// values in label-name order; a family without series is left out and a
// repeated series is written once.
func TestRenderOrder(t *testing.T) {
	z := newFamily("nicdiag_z", "counter", "Z.")
	a := newFamily("nicdiag_a", "gauge", "A.", "y", "x")
	newFamily("nicdiag_empty", "gauge", "Never written.")
	text := render([]sample{
		{f: z, v: 3},
		{f: a, values: []string{"1", "b"}, v: 1},
		{f: a, values: []string{"2", "a"}, v: 2},
		{f: a, values: []string{"0", "b"}, v: 3},
		{f: a, values: []string{"2", "a"}, v: 4},
	})
	want := `# HELP nicdiag_a A.
# TYPE nicdiag_a gauge
nicdiag_a{x="a",y="2"} 2
nicdiag_a{x="b",y="0"} 3
nicdiag_a{x="b",y="1"} 1
# HELP nicdiag_z Z.
# TYPE nicdiag_z counter
nicdiag_z 3
`
	if string(text) != want {
		t.Errorf("render:\n%s\nwant:\n%s", text, want)
	}
}
