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
			!strings.Contains(out, "error irq.hot_core enp1s0") || !strings.HasPrefix(out, "verdict: core: CPU 2 was 99 % busy") {
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
		Verdict *monitor.Verdict `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if j.Schema != jsonSchema || j.Format != "svg" || j.Samples != 60 || j.Notes == nil || len(j.Findings) != 3 || j.Findings[0].Code != "irq.hot_core" {
		t.Errorf("json = %+v", j)
	}
	if v := j.Verdict; v == nil || v.Bound != monitor.BoundCore || v.Limit == nil || *v.Limit.CPU != 2 || len(v.Ceilings) != 1 || len(v.Traffic) != 2 {
		t.Errorf("verdict = %+v", j.Verdict)
	}
}

// fieldRuns are the recorded field-report runs (testdata/runs).
var fieldRuns = []struct {
	name  string
	bound monitor.Bound
	want  string // in the text output
}{
	{"82576-seed-pcie", monitor.BoundPCIe, "bound  pcie      up         enp1s0f0+enp1s0f1  1378 Mb/s  1435 Mb/s  96 %   the 2.5 GT/s x1 link at 0000:00:1c.0"},
	{"i350-same-adapter-ethernet", monitor.BoundEthernet, "the Ethernet link bound this run"},
	{"ccr2004-fastpath-off-outside", monitor.BoundOutside, "card   -          enp1s0f0+enp1s0f1+enp1s0f2+enp1s0f3  2804 Mb/s  9400 Mb/s  30 %"},
	{"apu1c-rtl8111e-core", monitor.BoundCore, "bound  core      -          enp7s0+enp8s0  850 Mb/s  855 Mb/s   100 %"},
}

// TestReportVerdictText: the report of each field run prints its verdict
// sentence first, then its ceilings (goldens report-RUN.txt); --json
// carries the same verdict as the record's.
func TestReportVerdictText(t *testing.T) {
	for _, r := range fieldRuns {
		t.Run(r.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join("..", "..", "testdata", "runs", r.name+".jsonl")
			out, errb, code := reportCLI(t, "report", in, "-o", filepath.Join(dir, r.name+".html"))
			if code == exitFail {
				t.Fatalf("exit %d: %s", code, errb)
			}
			rec, err := monitor.ReadRecordFile(in)
			if err != nil {
				t.Fatal(err)
			}
			if first := strings.SplitN(out, "\n", 2)[0]; first != "verdict: "+string(r.bound)+": "+rec.Verdict.Summary {
				t.Errorf("first line %q", first)
			}
			if i, j := strings.Index(out, "ceilings at this run's mix"), strings.Index(out, "wrote "); i < 0 || j < i {
				t.Errorf("no ceilings table between the verdict and what was written:\n%s", out)
			}
			if !strings.Contains(out, r.want) {
				t.Errorf("output lacks %q:\n%s", r.want, out)
			}
			golden(t, "report-"+r.name+".txt", strings.ReplaceAll(out, dir, "OUT"))

			out, errb, _ = reportCLI(t, "--json", "report", in, "-o", filepath.Join(dir, r.name+".svg"))
			var j struct {
				Verdict *monitor.Verdict `json:"verdict"`
			}
			if err := json.Unmarshal([]byte(out), &j); err != nil || j.Verdict == nil {
				t.Fatalf("%v: %s %s", err, out, errb)
			}
			want, _ := json.Marshal(rec.Verdict)
			got, _ := json.Marshal(j.Verdict)
			if !bytes.Equal(got, want) {
				t.Errorf("--json verdict differs from the record's:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestReportVerdictHostile: a record's strings reach the terminal without
// the control characters a terminal would obey.
func TestReportVerdictHostile(t *testing.T) {
	const nic = `eth\u001b]0;pwned\u0007\u001b[2J`
	var b strings.Builder
	b.WriteString(`{"type":"start","schema":"nicdiag/v1","interval_s":1,"limits":[{"nic":"` + nic + `","port_mbps":1000}]}` + "\n")
	for i := 1; i <= 3; i++ {
		b.WriteString(`{"type":"sample","schema":"nicdiag/v1","time":"2026-01-01T00:00:0` + string(rune('0'+i)) + `Z","interval_s":1,"cpus":[{"cpu":0,"busy_pct":10}],` +
			`"nics":[{"name":"` + nic + `","rx_packets_per_s":80000,"rx_bytes_per_s":121120000}]}` + "\n")
	}
	rec := filepath.Join(t.TempDir(), "evil.jsonl")
	if err := os.WriteFile(rec, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errb, code := reportCLI(t, "report", rec, "-o", filepath.Join(t.TempDir(), "evil.html"))
	if code == exitFail {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("control characters reached stdout: %q", out)
	}
	if !strings.HasPrefix(out, "verdict: ethernet: eth]0;pwned[2J moved") || !strings.Contains(out, "eth]0;pwned[2J's 1000 Mb/s link") {
		t.Errorf("stdout %q", out)
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
