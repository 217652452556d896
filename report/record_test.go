package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

func readSynthetic(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadSynthetic(t *testing.T) {
	rec, err := ReadFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Source != "ccr2004-synthetic.jsonl" {
		t.Errorf("Source = %q", rec.Source)
	}
	if len(rec.Samples) != synthSamples {
		t.Fatalf("%d samples, want %d", len(rec.Samples), synthSamples)
	}
	if len(rec.Notes) != 0 {
		t.Errorf("notes on a clean record: %q", rec.Notes)
	}
	if strings.Join(rec.Run.Command, " ") != "iperf3 -s -1" || rec.Run.ExitCode == nil || *rec.Run.ExitCode != 0 || rec.Run.Interrupted {
		t.Errorf("run = %+v", rec.Run)
	}
	if rec.Summary == nil || rec.Summary.Samples != synthSamples {
		t.Fatalf("summary = %+v", rec.Summary)
	}
	var hot *finding.Finding
	for i, f := range rec.Summary.Findings {
		if f.Code == finding.IRQHotCore {
			hot = &rec.Summary.Findings[i]
		}
	}
	if hot == nil || hot.Severity != finding.Error || hot.Evidence["cpu"] != "2" || hot.Subject != synthNIC {
		t.Fatalf("hot-core finding = %+v; findings: %v", hot, rec.Summary.Findings)
	}
	c := rec.Samples[10].CPUs[synthHot]
	if c.CPU != synthHot || c.PacketPct() < 90 {
		t.Errorf("sample 10 CPU %d packet time %.1f%%", c.CPU, c.PacketPct())
	}
}

// lines splits the synthetic record into its start line, sample lines and
// summary line (without newlines).
func lines(t *testing.T) (start []byte, samples [][]byte, summary []byte) {
	ls := bytes.Split(bytes.TrimSuffix(readSynthetic(t), []byte("\n")), []byte("\n"))
	return ls[0], ls[1 : len(ls)-1], ls[len(ls)-1]
}

func TestReadTruncatedMidLine(t *testing.T) {
	start, ls, _ := lines(t)
	// The start line, 30 complete samples, then half of the 31st: monitor
	// killed mid-write.
	var b bytes.Buffer
	b.Write(start)
	b.WriteByte('\n')
	for _, l := range ls[:30] {
		b.Write(l)
		b.WriteByte('\n')
	}
	b.Write(ls[30][:len(ls[30])/2])
	rec, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Samples) != 30 {
		t.Fatalf("%d samples, want the 30 complete ones", len(rec.Samples))
	}
	if len(rec.Notes) != 2 || !strings.Contains(rec.Notes[0], "ends mid-line (line 32") ||
		!strings.Contains(rec.Notes[1], "no summary line") {
		t.Fatalf("notes = %q", rec.Notes)
	}
	if rec.Summary == nil || rec.Summary.Samples != 30 {
		t.Fatalf("summary not recomputed from the 30 samples: %+v", rec.Summary)
	}
	if len(rec.Summary.Findings) == 0 || rec.Summary.Findings[0].Code != finding.IRQHotCore {
		t.Errorf("recomputed findings = %v", rec.Summary.Findings)
	}
}

func TestReadWithoutSummary(t *testing.T) {
	_, ls, _ := lines(t)
	rec, err := Read(bytes.NewReader(append(bytes.Join(ls[:5], []byte("\n")), '\n')))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Samples) != 5 || len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0], "computed from its 5 samples") {
		t.Fatalf("samples %d notes %q", len(rec.Samples), rec.Notes)
	}
}

// TestReadEnvelopes: a sample reads the same whether typed, wrapped or
// bare; the summary likewise.
func TestReadEnvelopes(t *testing.T) {
	samples := syntheticSamples()[:3]
	sum := irq.Summarize(samples)
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var typedRec, wrapped, bare strings.Builder
	for _, s := range samples {
		typedRec.WriteString(enc(typed[irq.Sample]{"sample", s}) + "\n")
		wrapped.WriteString(enc(map[string]any{"sample": s}) + "\n")
		bare.WriteString(enc(s) + "\n")
	}
	typedRec.WriteString(enc(typed[irq.Summary]{"summary", sum}) + "\n")
	wrapped.WriteString(enc(map[string]any{"summary": sum}) + "\n")
	bare.WriteString(enc(sum) + "\n")
	var want []byte
	for i, in := range []string{typedRec.String(), wrapped.String(), bare.String()} {
		rec, err := Read(strings.NewReader(in))
		if err != nil {
			t.Fatalf("envelope %d: %v", i, err)
		}
		if len(rec.Notes) != 0 {
			t.Errorf("envelope %d: notes %q", i, rec.Notes)
		}
		got, _ := json.Marshal(rec)
		if want == nil {
			want = got
		} else if !bytes.Equal(got, want) {
			t.Errorf("envelope %d decodes differently", i)
		}
	}
}

func TestReadBad(t *testing.T) {
	_, ls, sum := lines(t)
	good := string(ls[0])
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "no sample"},
		{"blank lines", "\n\n  \n", "no sample"},
		{"summary only", string(sum) + "\n", "no sample"},
		{"garbage in the middle", good + "\n{\"type\":\"sample\",\n" + good + "\n", "line 2: not valid JSON"},
		{"not an object", good + "\n[1,2,3]\n", "line 2: not a JSON object"},
		{"unknown object", good + "\n{\"hello\":1}\n", "line 2: neither a sample nor a summary"},
		{"wrong field type", `{"type":"sample","interval_s":"one"}` + "\n", "line 1: sample:"},
		{"zero interval", `{"type":"sample","interval_s":0,"cpus":[]}` + "\n", "interval_s 0 is not in"},
		{"negative interval", `{"type":"sample","interval_s":-1,"cpus":[]}` + "\n", "interval_s -1 is not in"},
		{"huge interval", `{"type":"sample","interval_s":1e300,"cpus":[]}` + "\n", "is not in"},
		{"tiny interval", `{"type":"sample","interval_s":5e-324,"cpus":[]}` + "\n", "is not in"},
		{"negative cpu", `{"type":"sample","interval_s":1,"cpus":[{"cpu":-4}]}` + "\n", "negative cpu id -4"},
		{"bad time", `{"type":"sample","time":"yesterday","interval_s":1}` + "\n", "line 1: sample:"},
		{"type not a string", `{"type":5,"interval_s":1}` + "\n", "line 1: not a monitor record line"},
		{"long line", `{"type":"sample","x":"` + strings.Repeat("a", MaxLineBytes) + `"}` + "\n", "line 1: longer than"},
		{"garbage then truncated", "not json\n{\"type\":", "line 1: not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := Read(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error; %d samples, notes %q", len(rec.Samples), rec.Notes)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
	if _, err := Read(strings.NewReader("")); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v is not ErrEmpty", err)
	}
}

func TestReadTolerates(t *testing.T) {
	_, ls, _ := lines(t)
	crlf := string(ls[0]) + "\r\n" + string(ls[1]) + "\r\n"
	rec, err := Read(strings.NewReader(crlf))
	if err != nil || len(rec.Samples) != 2 {
		t.Fatalf("CRLF: %v", err)
	}
	// No newline after a complete last line: kept, no truncation note.
	rec, err = Read(strings.NewReader(string(ls[0]) + "\n" + string(ls[1])))
	if err != nil || len(rec.Samples) != 2 || len(rec.Notes) != 1 {
		t.Fatalf("unterminated complete line: %v, notes %q", err, rec.Notes)
	}
	// Another object type is skipped with a note.
	rec, err = Read(strings.NewReader(`{"type":"header"}` + "\n" + string(ls[0]) + "\n"))
	if err != nil || len(rec.Samples) != 1 || !strings.Contains(rec.Notes[0], `skipped an object of type "header"`) {
		t.Fatalf("header line: %v, notes %q", err, rec.Notes)
	}
	// Another schema is read, with one note.
	v2 := strings.ReplaceAll(string(ls[0])+"\n"+string(ls[1])+"\n", `"schema":"nicdiag/v1"`, `"schema":"nicdiag/v2"`)
	rec, err = Read(strings.NewReader(v2))
	if err != nil || len(rec.Samples) != 2 || !strings.Contains(rec.Notes[0], `schema "nicdiag/v2"`) || len(rec.Notes) != 2 {
		t.Fatalf("schema v2: %v, notes %q", err, rec.Notes)
	}
	// A second run appended after the summary is ignored, and said so.
	all := string(readSynthetic(t))
	rec, err = Read(strings.NewReader(all + all))
	if err != nil || len(rec.Samples) != synthSamples || len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0], "follow the summary") {
		t.Fatalf("appended run: %v, %d samples, notes %q", err, len(rec.Samples), rec.Notes)
	}
}

func TestReadFileErrors(t *testing.T) {
	if _, err := ReadFile(filepath.Join(t.TempDir(), "nope.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), p) {
		t.Errorf("empty file: %v", err)
	}
}
