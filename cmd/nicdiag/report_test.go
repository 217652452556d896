package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/report"
)

// synthRecord is the synthetic 4-CPU run with CPU 2 at ~97% softirq (see
// report/testdata/README.md).
const synthRecord = "../../report/testdata/ccr2004-synthetic.jsonl"

func reportCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func wantRender(t *testing.T, path string, f report.Format) []byte {
	t.Helper()
	rec, err := monitor.ReadRecordFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.Render(&b, rec, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReportWritesHTMLAndSVG(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		file string
		f    report.Format
	}{
		{[]string{"report", synthRecord, "-o", filepath.Join(dir, "run.html")}, "run.html", report.HTML},
		{[]string{"report", "-o", filepath.Join(dir, "charts.svg"), synthRecord}, "charts.svg", report.SVG},
	} {
		out, errb, code := reportCLI(t, c.args...)
		if code != exitError { // the run has an irq.hot_core error
			t.Fatalf("%v: exit %d, stderr %q", c.args, code, errb)
		}
		if !strings.Contains(out, "wrote "+filepath.Join(dir, c.file)+": 60 samples, 3 findings") ||
			!strings.Contains(out, "error irq.hot_core enp1s0") {
			t.Errorf("stdout %q", out)
		}
		got, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, wantRender(t, synthRecord, c.f)) {
			t.Errorf("%s differs from report.Render", c.file)
		}
	}
}

func TestReportStdoutAndDefaultName(t *testing.T) {
	out, errb, code := reportCLI(t, "report", "--format", "svg", synthRecord, "-o", "-")
	if code != exitError || !strings.HasPrefix(out, "<?xml") || errb != "" {
		t.Fatalf("-o -: exit %d, stderr %q, stdout %.40q", code, errb, out)
	}
	// Without -o the page lands next to the record.
	dir := t.TempDir()
	rec := filepath.Join(dir, "run.jsonl")
	b, err := os.ReadFile(synthRecord)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errb, code := reportCLI(t, "report", rec); code != exitError {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if _, err := os.Stat(filepath.Join(dir, "run.html")); err != nil {
		t.Fatal(err)
	}
}

func TestReportJSON(t *testing.T) {
	out, errb, code := reportCLI(t, "--json", "report", synthRecord, "-o", filepath.Join(t.TempDir(), "r.svg"))
	if code != exitError {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var j struct {
		Schema   string   `json:"schema"`
		Format   string   `json:"format"`
		Samples  int      `json:"samples"`
		Notes    []string `json:"notes"`
		Findings []struct {
			Code string `json:"code"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if j.Schema != jsonSchema || j.Format != "svg" || j.Samples != 60 || j.Notes == nil || len(j.Findings) != 3 || j.Findings[0].Code != "irq.hot_core" {
		t.Errorf("json = %+v", j)
	}
}

// A record cut mid-line (monitor killed) still draws, with a note.
func TestReportTruncatedRecord(t *testing.T) {
	b, err := os.ReadFile(synthRecord)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rec := filepath.Join(dir, "cut.jsonl")
	cut := bytes.Index(b, []byte(`"time":"2024-05-14T10:00:21Z"`)) + 300 // inside the 21st sample
	if err := os.WriteFile(rec, b[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "cut.html")
	_, errb, code := reportCLI(t, "report", rec, "-o", out)
	if code != exitError {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !strings.Contains(errb, "note: the record ends mid-line (line 22") || !strings.Contains(errb, "20 complete samples") {
		t.Errorf("stderr %q", errb)
	}
	page, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(page, []byte("20 s in 20 samples")) {
		t.Errorf("page: %v", err)
	}
}

func TestReportFailures(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "need exactly one record"},
		{[]string{"report", "a.jsonl", "b.jsonl"}, "need exactly one record"},
		{[]string{"report", filepath.Join(dir, "nope.jsonl"), "-o", filepath.Join(dir, "x.html")}, "no such file"},
		{[]string{"report", empty, "-o", filepath.Join(dir, "x.html")}, "holds no sample"},
		{[]string{"report", synthRecord, "-o", filepath.Join(dir, "x.png")}, "use .html or .svg"},
		{[]string{"report", synthRecord, "--format", "pdf", "-o", filepath.Join(dir, "x.html")}, "unknown format"},
		{[]string{"report", synthRecord, "--format", "svg", "-o", filepath.Join(dir, "x.html")}, "does not end in .svg"},
		{[]string{"report", synthRecord, "-o", filepath.Join(dir, "no-such-dir", "x.html")}, "no such file"},
		{[]string{"report", synthRecord, "--bogus"}, "flag provided but not defined"},
		{[]string{"--json", "report", synthRecord, "-o", "-"}, "both want standard output"},
	} {
		_, errb, code := reportCLI(t, c.args...)
		if code != exitFail || !strings.Contains(errb, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errb, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.html")); err == nil {
		t.Error("a failed report left a file")
	}
}

func TestReportHelp(t *testing.T) {
	out, _, code := reportCLI(t, "help", "report")
	if code != exitOK || !strings.Contains(out, "nicdiag report run.jsonl -o run.html") || !strings.Contains(out, "--format") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	out, _, _ = reportCLI(t, "--help")
	if !strings.Contains(out, "report") {
		t.Error("the command list lacks report")
	}
}

// End to end on this host: what monitor --record writes, report reads.
func TestReportOfLiveMonitorRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("samples the live host for a second")
	}
	dir := t.TempDir()
	rec := filepath.Join(dir, "live.jsonl")
	_, errb, code := reportCLI(t, "monitor", "--interval", "200ms", "--duration", "1100ms", "--record", rec)
	if code == exitFail {
		t.Skipf("monitor cannot sample this host: %s", errb)
	}
	out := filepath.Join(dir, "live.html")
	_, errb, code = reportCLI(t, "report", rec, "-o", out)
	if code == exitFail {
		t.Fatalf("report of a live record: %s", errb)
	}
	if errb != "" {
		t.Errorf("notes on a clean live record: %s", errb)
	}
	page, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(page, []byte(`class="chart heatmap-load"`)) {
		t.Fatalf("page: %v", err)
	}
}
