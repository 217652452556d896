package monitor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// Limits that keep a hostile or runaway record from exhausting memory.
const (
	// MaxLineBytes is the longest record line ReadRecord accepts.
	MaxLineBytes = 4 << 20
	// MaxSamples is the most samples ReadRecord accepts (a day at one per
	// second is 86,400).
	MaxSamples = 200_000
	// MaxCPUs is the most distinct CPU ids a record may name.
	MaxCPUs = 8192
	// MaxQueues is the most distinct NIC queues a record may name.
	MaxQueues = 8192
	// maxStartFindings bounds the findings a start line may carry.
	maxStartFindings = 10000
	// minInterval and maxInterval bound interval_s: a microsecond, a day.
	minInterval = 1e-6
	maxInterval = 86400
)

// Record is one monitored run as read back from its record: the samples in
// order and the summary (verdicts) written at the end.
type Record struct {
	// Source names the record (ReadRecordFile sets the file's base name;
	// report shows it); may be empty.
	Source string
	// Samples are the intervals in the order they were taken.
	Samples []irq.Sample
	// Summary is the verdict over the run. ReadRecord fills it with
	// irq.Summarize(Samples) when the record has none; report.Render does
	// the same, without changing the Record, when it is nil.
	Summary *irq.Summary
	// Run is what the record's start and summary lines say about the run
	// beyond its samples.
	Run RunInfo
	// Limits are the start line's: the verdict's inputs (nil in a record
	// written without them, or by an older nicdiag).
	Limits []Limits
	// Verdict is the verdict over Samples and Limits, computed by
	// ReadRecord with a Window fed line by line: the same as the run's
	// own, offline. report.Render judges a Record whose Verdict is nil.
	Verdict *Verdict
	// Notes say what a reader should know about the record itself: that
	// it was cut short, that the summary was recomputed, what was skipped.
	Notes []string

	schemaNoted bool
	before      []finding.Finding // the start line's
	win         *Window           // the samples so far, judged against Limits
}

// RunInfo describes how a monitored run was made and how it ended.
type RunInfo struct {
	// Command is the argv of the command monitor ran (the start line's
	// "command", or the summary's "command.argv"); empty when none.
	Command []string
	// ExitCode is the command's exit status (the summary's
	// "command.exit_code"); nil when there was no command or no summary.
	ExitCode *int
	// CommandError says how the command failed ("command.error").
	CommandError string
	// Interrupted is true when sampling was ended by Ctrl-C (the
	// summary's "interrupted").
	Interrupted bool
}

// readStart is what ReadRecord takes from a start line.
type readStart struct {
	Command  []string          `json:"command"`
	Limits   []Limits          `json:"limits"`
	Findings []finding.Finding `json:"findings"`
}

// summaryExtra is what a summary line carries besides irq.Summary.
type summaryExtra struct {
	Command *struct {
		Argv     []string `json:"argv"`
		ExitCode *int     `json:"exit_code"`
		Error    string   `json:"error"`
	} `json:"command"`
	Interrupted bool `json:"interrupted"`
}

// ReadRecordFile reads the record at path (see ReadRecord) and sets Source
// to the file's base name. Errors name the path.
func ReadRecordFile(path string) (*Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rec, err := ReadRecord(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rec.Source = filepath.Base(path)
	return rec, nil
}

// ReadRecord decodes a record as Writer (and so `nicdiag monitor --record`)
// writes it: JSON lines, a "start" object, one "sample" object per interval
// (irq.Sample's fields) and a final "summary" object (irq.Summary's fields,
// plus "command" and "interrupted"). A line is recognised by its "type"
// field; for records written by other tools also by a wrapper ({"sample":
// {...}} or {"summary": {...}}) or by its fields ("findings" makes a
// summary; "cpus" or "interval_s" a sample). Blank lines are ignored;
// objects of another type are skipped with a note.
//
// A last line that is cut short (no newline, not valid JSON), as when the
// monitor was stopped mid-write, is dropped with a note and the samples
// before it are kept. Any other malformed line is an error naming the line
// and wrapping ErrMalformed. A record without a sample returns an error
// wrapping ErrEmpty. When the record has no summary, ReadRecord computes
// one from the samples, with the findings the start line carries (those
// made before the run), and says so in Notes.
func ReadRecord(r io.Reader) (*Record, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	rec := &Record{}
	cpus := map[int]bool{}
	queues := map[queueKey]bool{}
	var buf []byte
	for lineNo := 1; ; lineNo++ {
		line, complete, err := readLine(br, &buf)
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errLong) {
				return nil, &lineError{lineNo, err}
			}
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if rec.Summary != nil {
				// Anything after the summary: a second run appended, or
				// garbage. Say so and stop.
				rec.Notes = append(rec.Notes, fmt.Sprintf("line %d and later follow the summary and were ignored", lineNo))
				break
			}
			if !complete && !json.Valid(t) {
				rec.Notes = append(rec.Notes, fmt.Sprintf(
					"the record ends mid-line (line %d, %d bytes, no newline): the run was probably interrupted; the %d complete samples before it are shown",
					lineNo, len(t), len(rec.Samples)))
				break
			}
			if err := rec.decodeLine(t, lineNo, cpus, queues); err != nil {
				return nil, &lineError{lineNo, err}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if len(rec.Samples) == 0 {
		if rec.Summary != nil {
			return nil, fmt.Errorf("%w (it has a summary but nothing to draw)", ErrEmpty)
		}
		return nil, ErrEmpty
	}
	v := rec.window().Verdict()
	rec.Verdict = &v
	if rec.Summary == nil {
		s := rec.win.Summary()
		s.Findings = append(s.Findings, rec.before...)
		s.Findings = append(s.Findings, v.Findings...)
		finding.Sort(s.Findings)
		rec.Summary = &s
		rec.Notes = append(rec.Notes, fmt.Sprintf(
			"the record has no summary line; the verdicts below were computed from its %d samples", len(rec.Samples)))
	}
	return rec, nil
}

// errLong is a line over MaxLineBytes.
var errLong = fmt.Errorf("longer than %d bytes: not a monitor record", MaxLineBytes)

// readLine returns the next line without its line ending, and whether it
// ended with a newline. err is io.EOF at the end of input.
func readLine(br *bufio.Reader, buf *[]byte) (line []byte, complete bool, err error) {
	*buf = (*buf)[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		*buf = append(*buf, chunk...)
		if len(*buf) > MaxLineBytes {
			return nil, false, errLong
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return *buf, false, err
		}
		return bytes.TrimSuffix((*buf)[:len(*buf)-1], []byte{'\r'}), true, nil
	}
}

type queueKey struct {
	nic string
	irq int
}

// probe finds out what a line is without decoding it twice in full.
type probe struct {
	Type      string          `json:"type"`
	Schema    *string         `json:"schema"`
	Kind      string          `json:"kind"`
	Sample    json.RawMessage `json:"sample"`
	Summary   json.RawMessage `json:"summary"`
	Findings  json.RawMessage `json:"findings"`
	CPUs      json.RawMessage `json:"cpus"`
	IntervalS json.RawMessage `json:"interval_s"`
}

// classify says what a record line is ("start", "sample", "summary", or
// another type) and returns the object that holds its fields: the line,
// or the object a wrapper ({"sample": {...}}) holds.
func classify(line []byte) (body []byte, kind string, p probe, err error) {
	if !json.Valid(line) {
		var v any
		return nil, "", p, fmt.Errorf("not valid JSON: %v", json.Unmarshal(line, &v))
	}
	if line[0] != '{' {
		return nil, "", p, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(line, &p); err != nil {
		return nil, "", p, fmt.Errorf("not a monitor record line: %v", err)
	}
	body, kind = line, p.Type
	if kind == "" {
		kind = p.Kind
	}
	switch {
	case isObject(p.Sample):
		body, kind = p.Sample, "sample"
	case isObject(p.Summary):
		body, kind = p.Summary, "summary"
	case kind != "":
	case p.Findings != nil:
		kind = "summary"
	case p.CPUs != nil || p.IntervalS != nil:
		kind = "sample"
	default:
		return nil, "", p, errors.New("neither a sample nor a summary (no type, findings, cpus or interval_s field)")
	}
	return body, kind, p, nil
}

func (rec *Record) decodeLine(line []byte, lineNo int, cpus map[int]bool, queues map[queueKey]bool) error {
	body, kind, p, err := classify(line)
	if err != nil {
		return err
	}
	if p.Schema != nil && *p.Schema != Schema && !rec.schemaNoted {
		rec.schemaNoted = true
		rec.Notes = append(rec.Notes, fmt.Sprintf("line %d: written with schema %q; this reader knows %q and may miss fields", lineNo, *p.Schema, Schema))
	}
	switch kind {
	case "start":
		var st readStart
		if err := json.Unmarshal(body, &st); err != nil {
			return fmt.Errorf("start: %v", err)
		}
		rec.Run.Command = st.Command
		if len(st.Limits) > MaxQueues {
			return fmt.Errorf("start: more than %d NIC limits", MaxQueues)
		}
		rec.Limits = st.Limits
		if len(st.Findings) > maxStartFindings {
			return fmt.Errorf("start: more than %d findings", maxStartFindings)
		}
		rec.before = st.Findings
	case "sample":
		s, err := decodeSample(body, cpus, queues)
		if err != nil {
			return fmt.Errorf("sample: %v", err)
		}
		if len(rec.Samples) >= MaxSamples {
			return fmt.Errorf("more than %d samples", MaxSamples)
		}
		if len(rec.Limits)+len(s.Added) > MaxQueues {
			return fmt.Errorf("sample: more than %d NIC limits", MaxQueues)
		}
		rec.Samples = append(rec.Samples, s.Sample)
		rec.Limits = append(rec.Limits, s.Added...)
		rec.window().AddSample(s)
	case "summary":
		return rec.decodeSummary(body)
	default:
		rec.Notes = append(rec.Notes, fmt.Sprintf("line %d: skipped an object of type %q", lineNo, kind))
	}
	return nil
}

// decodeSummary reads a summary line: the summary, how the command ended,
// whether the run was interrupted.
func (rec *Record) decodeSummary(body []byte) error {
	var s irq.Summary
	if err := json.Unmarshal(body, &s); err != nil {
		return fmt.Errorf("summary: %v", err)
	}
	var x summaryExtra
	if err := json.Unmarshal(body, &x); err != nil {
		return fmt.Errorf("summary: %v", err)
	}
	if x.Command != nil {
		if len(x.Command.Argv) > 0 {
			rec.Run.Command = x.Command.Argv
		}
		rec.Run.ExitCode = x.Command.ExitCode
		rec.Run.CommandError = x.Command.Error
	}
	rec.Run.Interrupted = x.Interrupted
	rec.Summary = &s
	return nil
}

// window is the record's Window, made at its first sample: a start line
// comes first, with the limits.
func (rec *Record) window() *Window {
	if rec.win == nil {
		rec.win = NewWindow(rec.Limits)
		if len(rec.Run.Command) > 0 {
			rec.win.commandRun()
		}
	}
	return rec.win
}

func isObject(m json.RawMessage) bool {
	t := bytes.TrimSpace(m)
	return len(t) > 0 && t[0] == '{'
}

// checkSample rejects what cannot be drawn honestly and bounds what could
// exhaust memory.
func checkSample(s *irq.Sample, cpus map[int]bool, queues map[queueKey]bool) error {
	if !(s.IntervalS >= minInterval && s.IntervalS <= maxInterval) {
		return fmt.Errorf("interval_s %v is not in [%g, %d]", s.IntervalS, minInterval, maxInterval)
	}
	for _, c := range s.CPUs {
		if c.CPU < 0 {
			return fmt.Errorf("negative cpu id %d", c.CPU)
		}
		if !cpus[c.CPU] {
			if len(cpus) >= MaxCPUs {
				return fmt.Errorf("more than %d distinct CPUs", MaxCPUs)
			}
			cpus[c.CPU] = true
		}
		if c.IRQPct != nil && math.IsNaN(*c.IRQPct) {
			return errors.New("irq_pct is NaN")
		}
	}
	for _, n := range s.NICs {
		for _, q := range n.Queues {
			k := queueKey{n.Name, q.IRQ}
			if !queues[k] {
				if len(queues) >= MaxQueues {
					return fmt.Errorf("more than %d distinct NIC queues", MaxQueues)
				}
				queues[k] = true
			}
		}
	}
	return nil
}
