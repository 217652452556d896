package monitor

import (
	"encoding/json"
	"io"
	"time"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// Schema versions the record, and every other JSON document nicdiag
// writes. It changes only when a field is removed or changes meaning; new
// fields may appear. ReadRecord reads lines carrying another schema with a
// note.
const Schema = "nicdiag/v1"

// startLine opens a record: what is sampled and how.
type startLine struct {
	Type      string          `json:"type"` // "start"
	Schema    string          `json:"schema"`
	IntervalS float64         `json:"interval_s"`
	Command   []string        `json:"command,omitempty"`
	NICs      []irq.NICQueues `json:"nics"`
	Limits    []Limits        `json:"limits,omitempty"`
	// Findings are those made before the run: a record cut short keeps
	// them.
	Findings []finding.Finding `json:"findings,omitempty"`
}

// Header is what a record's start line holds.
type Header struct {
	// Interval is the time between samples.
	Interval time.Duration
	// Command is the argv of the command run; nil when none.
	Command []string
	// Queues is the NIC → IRQ map sampled.
	Queues []irq.NICQueues
	// Limits are the NICs' ceilings' inputs (WithLimits), for the verdict.
	Limits []Limits
	// Findings are the findings made before the run (WithFindings): a
	// record cut short, without its summary, keeps them.
	Findings []finding.Finding
}

// sampleLine is one interval; the sample's fields are inlined.
type sampleLine struct {
	Type   string `json:"type"` // "sample"
	Schema string `json:"schema"`
	*irq.Sample
}

// summaryLine closes a record: window averages, findings, the queue map and
// how the command ended.
type summaryLine struct {
	Type   string `json:"type"` // "summary"
	Schema string `json:"schema"`
	*irq.Summary
	Queues      []irq.NICQueues `json:"queues"`
	Command     *CommandResult  `json:"command,omitempty"`
	Interrupted bool            `json:"interrupted"`
	Verdict     *Verdict        `json:"verdict,omitempty"`
}

// Writer writes a record: JSON lines with "type" "start", "sample" and
// "summary", each carrying "schema". Every line goes to the underlying
// writer in a single Write, unbuffered, so a line is whole in a file as
// soon as its method returns, and every finished sample survives the
// process being killed next. Each method reports its own write error; a
// Writer keeps no state and may be used for a part of a record, as
// `monitor --json` does for its samples and summary on standard output.
type Writer struct {
	w io.Writer
}

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteStart writes the start line.
func (w *Writer) WriteStart(s Header) error {
	return w.line(startLine{Type: "start", Schema: Schema, IntervalS: s.Interval.Seconds(), Command: s.Command,
		NICs: s.Queues, Limits: s.Limits, Findings: s.Findings})
}

// WriteSample writes one sample line: irq.Sample's fields with "type" and
// "schema".
func (w *Writer) WriteSample(x irq.Sample) error {
	return w.line(sampleLine{Type: "sample", Schema: Schema, Sample: &x})
}

// WriteSummary writes the summary line: r.Summary's fields with "type",
// "schema", "queues", "command" (omitted without one), "interrupted" and
// "verdict" (omitted when r has none).
func (w *Writer) WriteSummary(r *Result) error {
	l := summaryLine{Type: "summary", Schema: Schema, Summary: &r.Summary, Queues: r.Queues,
		Command: r.Command, Interrupted: r.Interrupted}
	if r.Verdict.Bound != "" {
		v := r.Verdict
		l.Verdict = &v
	}
	return w.line(l)
}

// line writes v as one line of JSON with a single Write.
func (w *Writer) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.w.Write(append(b, '\n'))
	return err
}
