package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
)

// golden compares got with testdata/golden/name; -update rewrites it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got: %.300s\nwant: %.300s\n(run go test ./report -update if the change is intended)", p, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: %d lines, want %d", p, len(gl), len(wl))
	}
}

func render(t *testing.T, rec *monitor.Record, f Format) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, rec, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func truncatedRecord(t *testing.T) *monitor.Record {
	t.Helper()
	b := readSynthetic(t)
	// Cut in the middle of the 21st sample line (line 22).
	n := 0
	for i, c := range b {
		if c == '\n' {
			n++
			if n == 21 {
				b = b[:i+1+700]
				break
			}
		}
	}
	rec, err := monitor.ReadRecord(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	rec.Source = "ccr2004-synthetic-truncated.jsonl"
	return rec
}

func TestGolden(t *testing.T) {
	rec, err := monitor.ReadRecordFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "ccr2004-synthetic.html", render(t, rec, HTML))
	golden(t, "ccr2004-synthetic.svg", render(t, rec, SVG))
	golden(t, "ccr2004-synthetic-truncated.html", render(t, truncatedRecord(t), HTML))
}

// TestDeterministic: the same record renders to the same bytes, also when
// decoded afresh (no map order, no clock).
func TestDeterministic(t *testing.T) {
	for _, f := range []Format{HTML, SVG} {
		var first []byte
		for range 5 {
			rec, err := monitor.ReadRecordFile(synthFile)
			if err != nil {
				t.Fatal(err)
			}
			got := render(t, rec, f)
			if first == nil {
				first = got
			} else if !bytes.Equal(first, got) {
				t.Fatalf("%v output differs between renders", f)
			}
		}
	}
}

func TestTruncatedPage(t *testing.T) {
	page := string(render(t, truncatedRecord(t), HTML))
	for _, want := range []string{"ends mid-line (line 22", "the 20 complete samples before it are shown",
		"20 s in 20 samples", "the verdicts below were computed from its 20 samples", "irq.hot_core"} {
		if !strings.Contains(page, want) {
			t.Errorf("truncated page lacks %q", want)
		}
	}
}

// TestSelfContained: the page fetches nothing and runs nothing.
func TestSelfContained(t *testing.T) {
	rec, err := monitor.ReadRecordFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, rec, HTML)
	for _, bad := range []string{"<script", "<link", "<iframe", "<img", "<object", "<embed", "src=", "href=", "@import", "url(", "@font-face", "javascript:"} {
		if bytes.Contains(bytes.ToLower(page), []byte(bad)) {
			t.Errorf("page contains %q", bad)
		}
	}
	// The only URL is the SVG namespace name, which is never fetched.
	for _, m := range regexp.MustCompile(`https?://[^"' <]*`).FindAll(page, -1) {
		if string(m) != "http://www.w3.org/2000/svg" {
			t.Errorf("page names %s", m)
		}
	}
}

// TestSVGWellFormed: the SVG output is one well-formed XML document.
func TestSVGWellFormed(t *testing.T) {
	rec, err := monitor.ReadRecordFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(render(t, rec, SVG)))
	charts := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "svg" {
			for _, a := range se.Attr {
				if a.Name.Local == "class" && strings.HasPrefix(a.Value, "chart ") {
					charts++
				}
			}
		}
	}
	// The ceilings, the CPUs' busy time, and the six of the run.
	if charts != 8 {
		t.Errorf("%d charts in the SVG, want 8", charts)
	}
}

var rectRE = regexp.MustCompile(`<rect x="([0-9.]+)" y="([0-9]+)" width="([0-9.]+)" height="([0-9]+)" fill="(#[0-9a-f]{6})"`)

// loadCells returns the load heatmap's cells from a rendered SVG: fill by
// row (y) in document order.
func loadCells(t *testing.T, svg string) map[int][]string {
	t.Helper()
	i := strings.Index(svg, `class="chart heatmap-load"`)
	j := strings.Index(svg[i:], "</g>")
	cells := map[int][]string{}
	for _, m := range rectRE.FindAllStringSubmatch(svg[i:i+j], -1) {
		y := 0
		for _, c := range m[2] {
			y = y*10 + int(c-'0')
		}
		cells[y] = append(cells[y], m[5])
	}
	return cells
}

// TestHeatmapCells: the load heatmap's CPU 2 row is the palette's hot end
// once the run is at full load; the other rows its cool end.
func TestHeatmapCells(t *testing.T) {
	rec, err := monitor.ReadRecordFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	cells := loadCells(t, string(render(t, rec, SVG)))
	rh := rowHeight(synthCPUs)
	if len(cells) != synthCPUs {
		t.Fatalf("%d heatmap rows, want %d", len(cells), synthCPUs)
	}
	for cpu := range synthCPUs {
		row := cells[plotTop+cpu*rh]
		if len(row) != synthSamples {
			t.Fatalf("CPU %d: %d cells, want %d", cpu, len(row), synthSamples)
		}
		for col, fill := range row[2:] {
			c := hex(fill)
			if cpu == synthHot && !(c.r < 200 && c.g < 10) {
				t.Errorf("CPU %d second %d: %s is not the hot end", cpu, col+2, fill)
			}
			if cpu != synthHot && !(c.r == 255 && c.g > 245) {
				t.Errorf("CPU %d second %d: %s is not the cool end", cpu, col+2, fill)
			}
		}
	}
}

// TestLongRunBuckets: a run longer than maxColumns samples is averaged
// into at most maxColumns columns.
func TestLongRunBuckets(t *testing.T) {
	base := syntheticSamples()
	var samples []irq.Sample
	for len(samples) < 1500 {
		samples = append(samples, base...)
	}
	samples = samples[:1500]
	page := string(render(t, &monitor.Record{Samples: samples}, SVG))
	cells := loadCells(t, page)
	for y, row := range cells {
		if len(row) != 500 {
			t.Errorf("row y=%d has %d cells, want 500 (3 samples each)", y, len(row))
		}
	}
	if !strings.Contains(string(render(t, &monitor.Record{Samples: samples}, HTML)), "Each column averages 3 consecutive samples") {
		t.Error("the page does not say columns are averaged")
	}
}

// TestRenderEdgeCases: records without NICs, without IRQ time, with a
// missing CPU in some samples, and with absurd values render without
// error, and say what they lack.
func TestRenderEdgeCases(t *testing.T) {
	s := syntheticSamples()[:5]
	for i := range s {
		s[i].NICs = nil
		s[i].IRQTimeAccounted = false
		for j := range s[i].CPUs {
			s[i].CPUs[j].IRQPct = nil
		}
	}
	s[1].CPUs = s[1].CPUs[:2] // CPUs 2, 3 unread for a second
	s[2].CPUs[0].SoftIRQPct = math.MaxFloat64
	s[3].CPUs[1].NetRXPerS = -5
	s[4].Missing = []string{"/proc/softirqs: gone"}
	page := string(render(t, &monitor.Record{Samples: s}, HTML))
	for _, want := range []string{"softirq time per CPU (hard-IRQ time not accounted)", "The record names no NIC queue",
		"The record names no NIC: only CPU load was sampled", "/proc/softirqs: gone", "no data",
		"The record carries no summary"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	render(t, &monitor.Record{Samples: s}, SVG)
	if err := Render(io.Discard, &monitor.Record{}, HTML); !errors.Is(err, monitor.ErrEmpty) {
		t.Errorf("empty record: %v", err)
	}
	if err := Render(io.Discard, nil, SVG); !errors.Is(err, monitor.ErrEmpty) {
		t.Errorf("nil record: %v", err)
	}
}

func TestFormatFor(t *testing.T) {
	for in, want := range map[string]Format{"a.html": HTML, "b.HTM": HTML, "dir/c.svg": SVG} {
		if f, err := FormatFor(in); err != nil || f != want {
			t.Errorf("FormatFor(%q) = %v, %v", in, f, err)
		}
	}
	for _, in := range []string{"report", "r.png", "r.json"} {
		if _, err := FormatFor(in); err == nil {
			t.Errorf("FormatFor(%q): no error", in)
		}
	}
	if f, err := ParseFormat("svg"); err != nil || f.String() != "svg" {
		t.Errorf("ParseFormat(svg) = %v, %v", f, err)
	}
}

func TestWriteFile(t *testing.T) {
	rec, err := monitor.ReadRecordFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "run.svg")
	if err := WriteFile(p, rec); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, render(t, rec, SVG)) {
		t.Fatalf("WriteFile wrote something else (%v)", err)
	}
	if err := WriteFile(filepath.Join(dir, "run.txt"), rec); err == nil {
		t.Error("run.txt: no error")
	}
	if err := WriteFile(filepath.Join(dir, "empty.html"), &monitor.Record{}); !errors.Is(err, monitor.ErrEmpty) {
		t.Errorf("empty record: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
}
