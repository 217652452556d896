package monitor

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// TestRecordRoundTrip: what Writer writes, ReadRecord reads back as it was
// written, with nothing to note.
func TestRecordRoundTrip(t *testing.T) {
	samples := testSamples(12)
	rec, err := ReadRecord(bytes.NewReader(testRecord(t, 12)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Notes) != 0 {
		t.Errorf("notes on a clean record: %q", rec.Notes)
	}
	got, _ := json.Marshal(rec.Samples)
	want, _ := json.Marshal(samples)
	if !bytes.Equal(got, want) {
		t.Errorf("samples differ after a round trip:\n got %.300s\nwant %.300s", got, want)
	}
	sum := irq.Summarize(samples)
	got, _ = json.Marshal(rec.Summary)
	want, _ = json.Marshal(sum)
	if !bytes.Equal(got, want) {
		t.Errorf("summary differs after a round trip:\n got %.300s\nwant %.300s", got, want)
	}
	if strings.Join(rec.Run.Command, " ") != "iperf3 -s -1" || rec.Run.ExitCode == nil || *rec.Run.ExitCode != 0 ||
		rec.Run.CommandError != "" || rec.Run.Interrupted {
		t.Errorf("run = %+v", rec.Run)
	}
	if len(rec.Summary.Findings) == 0 || rec.Summary.Findings[0].Code != finding.IRQHotCore || rec.Summary.Findings[0].Evidence["cpu"] != "2" {
		t.Errorf("findings = %v", rec.Summary.Findings)
	}
	// The verdict read back is the run's own.
	fromRun, _ := json.Marshal(testResult(samples).Verdict)
	read, _ := json.Marshal(rec.Verdict)
	if !bytes.Equal(fromRun, read) {
		t.Errorf("the run's verdict differs from the one read back:\n got %.300s\nwant %.300s", fromRun, read)
	}
}

// TestWriterLines: one line per call, each typed and carrying the schema,
// and each written with a single Write.
func TestWriterLines(t *testing.T) {
	var w countingWriter
	mw := NewWriter(&w)
	x := testSamples(1)[0]
	if err := mw.WriteStart(Header{Interval: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := mw.WriteSample(x); err != nil {
		t.Fatal(err)
	}
	if err := mw.WriteSummary(&Result{Summary: irq.Summarize([]irq.Sample{x})}); err != nil {
		t.Fatal(err)
	}
	if w.writes != 3 || strings.Count(w.b.String(), "\n") != 3 {
		t.Fatalf("%d writes, %d lines", w.writes, strings.Count(w.b.String(), "\n"))
	}
	ls := strings.Split(strings.TrimSuffix(w.b.String(), "\n"), "\n")
	for i, want := range []string{
		`{"type":"start","schema":"nicdiag/v1","interval_s":0.5,"nics":null}`,
		`{"type":"sample","schema":"nicdiag/v1","time":"2024-05-14T10:00:01Z","interval_s":1,`,
		`{"type":"summary","schema":"nicdiag/v1","start":`,
	} {
		if !strings.HasPrefix(ls[i], want) {
			t.Errorf("line %d = %.120s, want it to start %s", i+1, ls[i], want)
		}
	}
	if !strings.HasSuffix(ls[2], `"queues":null,"interrupted":false}`) || strings.Contains(ls[2], `"command"`) {
		t.Errorf("summary without a command = %s", ls[2])
	}
	failing := NewWriter(errWriter{})
	if err := failing.WriteSample(x); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("write error: %v", err)
	}
}

type countingWriter struct {
	b      bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.b.Write(p)
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestReadTruncatedMidLine: monitor killed mid-write leaves half a line;
// the complete samples before it are kept and the verdicts recomputed.
func TestReadTruncatedMidLine(t *testing.T) {
	start, ls, _ := testLines(t, 40)
	// The start line, 30 complete samples, then half of the 31st.
	var b bytes.Buffer
	b.Write(start)
	b.WriteByte('\n')
	for _, l := range ls[:30] {
		b.Write(l)
		b.WriteByte('\n')
	}
	b.Write(ls[30][:len(ls[30])/2])
	rec, err := ReadRecord(&b)
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
	if strings.Join(rec.Run.Command, " ") != "iperf3 -s -1" || rec.Run.ExitCode != nil {
		t.Errorf("run of a record without summary = %+v", rec.Run)
	}
}

func TestReadWithoutSummary(t *testing.T) {
	_, ls, _ := testLines(t, 8)
	rec, err := ReadRecord(bytes.NewReader(append(bytes.Join(ls[:5], []byte("\n")), '\n')))
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
	samples := testSamples(3)
	sum := irq.Summarize(samples)
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var typed, wrapped, bare strings.Builder
	w := NewWriter(&typed)
	for _, s := range samples {
		if err := w.WriteSample(s); err != nil {
			t.Fatal(err)
		}
		wrapped.WriteString(enc(map[string]any{"sample": s}) + "\n")
		bare.WriteString(enc(s) + "\n")
	}
	if err := w.WriteSummary(&Result{Summary: sum}); err != nil {
		t.Fatal(err)
	}
	wrapped.WriteString(enc(map[string]any{"summary": sum}) + "\n")
	bare.WriteString(enc(sum) + "\n")
	var want []byte
	for i, in := range []string{typed.String(), wrapped.String(), bare.String()} {
		rec, err := ReadRecord(strings.NewReader(in))
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
	_, ls, sum := testLines(t, 4)
	good := string(ls[0])
	for _, tc := range []struct {
		name, in, want string
		malformed      bool
	}{
		{"empty", "", "no sample", false},
		{"blank lines", "\n\n  \n", "no sample", false},
		{"summary only", string(sum) + "\n", "no sample", false},
		{"garbage in the middle", good + "\n{\"type\":\"sample\",\n" + good + "\n", "line 2: not valid JSON", true},
		{"not an object", good + "\n[1,2,3]\n", "line 2: not a JSON object", true},
		{"unknown object", good + "\n{\"hello\":1}\n", "line 2: neither a sample nor a summary", true},
		{"wrong field type", `{"type":"sample","interval_s":"one"}` + "\n", "line 1: sample:", true},
		{"zero interval", `{"type":"sample","interval_s":0,"cpus":[]}` + "\n", "interval_s 0 is not in", true},
		{"negative interval", `{"type":"sample","interval_s":-1,"cpus":[]}` + "\n", "interval_s -1 is not in", true},
		{"huge interval", `{"type":"sample","interval_s":1e300,"cpus":[]}` + "\n", "is not in", true},
		{"tiny interval", `{"type":"sample","interval_s":5e-324,"cpus":[]}` + "\n", "is not in", true},
		{"negative cpu", `{"type":"sample","interval_s":1,"cpus":[{"cpu":-4}]}` + "\n", "negative cpu id -4", true},
		{"bad time", `{"type":"sample","time":"yesterday","interval_s":1}` + "\n", "line 1: sample:", true},
		{"type not a string", `{"type":5,"interval_s":1}` + "\n", "line 1: not a monitor record line", true},
		{"long line", `{"type":"sample","x":"` + strings.Repeat("a", MaxLineBytes) + `"}` + "\n", "line 1: longer than", true},
		{"garbage then truncated", "not json\n{\"type\":", "line 1: not valid JSON", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := ReadRecord(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error; %d samples, notes %q", len(rec.Samples), rec.Notes)
			}
			if rec != nil {
				t.Error("a record and an error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			if errors.Is(err, ErrMalformed) != tc.malformed || errors.Is(err, ErrEmpty) == tc.malformed {
				t.Errorf("error %q: ErrMalformed %v, ErrEmpty %v", err, errors.Is(err, ErrMalformed), errors.Is(err, ErrEmpty))
			}
		})
	}
}

// TestReadIOError: a failing reader is an error naming the line, not a
// malformed record.
func TestReadIOError(t *testing.T) {
	_, err := ReadRecord(errReader{})
	if err == nil || !strings.Contains(err.Error(), "line 1: unplugged") || errors.Is(err, ErrMalformed) {
		t.Errorf("read error: %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("unplugged") }

func TestReadTolerates(t *testing.T) {
	_, ls, _ := testLines(t, 4)
	crlf := string(ls[0]) + "\r\n" + string(ls[1]) + "\r\n"
	rec, err := ReadRecord(strings.NewReader(crlf))
	if err != nil || len(rec.Samples) != 2 {
		t.Fatalf("CRLF: %v", err)
	}
	// No newline after a complete last line: kept, no truncation note.
	rec, err = ReadRecord(strings.NewReader(string(ls[0]) + "\n" + string(ls[1])))
	if err != nil || len(rec.Samples) != 2 || len(rec.Notes) != 1 {
		t.Fatalf("unterminated complete line: %v, notes %q", err, rec.Notes)
	}
	// Another object type is skipped with a note.
	rec, err = ReadRecord(strings.NewReader(`{"type":"header"}` + "\n" + string(ls[0]) + "\n"))
	if err != nil || len(rec.Samples) != 1 || !strings.Contains(rec.Notes[0], `skipped an object of type "header"`) {
		t.Fatalf("header line: %v, notes %q", err, rec.Notes)
	}
	// Another schema is read, with one note.
	v2 := strings.ReplaceAll(string(ls[0])+"\n"+string(ls[1])+"\n", `"schema":"nicdiag/v1"`, `"schema":"nicdiag/v2"`)
	rec, err = ReadRecord(strings.NewReader(v2))
	if err != nil || len(rec.Samples) != 2 || !strings.Contains(rec.Notes[0], `schema "nicdiag/v2"`) || len(rec.Notes) != 2 {
		t.Fatalf("schema v2: %v, notes %q", err, rec.Notes)
	}
	// A second run appended after the summary is ignored, and said so.
	all := string(testRecord(t, 4))
	rec, err = ReadRecord(strings.NewReader(all + all))
	if err != nil || len(rec.Samples) != 4 || len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0], "follow the summary") {
		t.Fatalf("appended run: %v, %d samples, notes %q", err, len(rec.Samples), rec.Notes)
	}
}

func TestReadRecordFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.jsonl")
	if err := os.WriteFile(p, testRecord(t, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := ReadRecordFile(p)
	if err != nil || rec.Source != "run.jsonl" || len(rec.Samples) != 3 {
		t.Fatalf("%+v, %v", rec, err)
	}
	if _, err := ReadRecordFile(filepath.Join(dir, "nope.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRecordFile(empty); !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), empty) {
		t.Errorf("empty file: %v", err)
	}
}

// TestRecordCutKeepsStaticFindings: a record cut before its summary (the
// monitor killed with SIGKILL) still carries the findings made before the
// run, in its start line, and ReadRecord puts them back into the summary
// it computes.
func TestRecordCutKeepsStaticFindings(t *testing.T) {
	static := finding.Finding{Code: finding.IRQAffinityConcentrate, Severity: finding.Warn, Subject: "eth0", Summary: "every queue IRQ on CPU 0"}
	var b bytes.Buffer
	w := NewWriter(&b)
	if err := w.WriteStart(Header{Interval: time.Second, Command: testArgv, Queues: testQueues(), Findings: []finding.Finding{static}}); err != nil {
		t.Fatal(err)
	}
	for _, x := range testSamples(3) {
		if err := w.WriteSample(x); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteString(`{"type":"sample","schema":"nicdiag/v1","time":"2024-05-14T10:00:0`) // killed mid-line
	rec, err := ReadRecord(&b)
	if err != nil {
		t.Fatal(err)
	}
	var got []finding.Code
	for _, f := range rec.Summary.Findings {
		got = append(got, f.Code)
		if f.Code == static.Code && (f.Subject != "eth0" || f.Severity != finding.Warn) {
			t.Errorf("static finding read back as %+v", f)
		}
	}
	if !slices.Contains(got, static.Code) || !slices.Contains(got, finding.IRQHotCore) {
		t.Errorf("findings %v: want the static %s beside the run's own", got, static.Code)
	}
	if len(rec.Notes) < 2 {
		t.Errorf("notes %q: want the cut line and the recomputed summary named", rec.Notes)
	}
}
