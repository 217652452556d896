package main

import (
	"encoding/json"
	"io"
	"os"

	"github.com/nicdiag/nicdiag/irq"
)

// startLine opens a record: what is sampled and how.
type startLine struct {
	Type      string          `json:"type"` // "start"
	Schema    string          `json:"schema"`
	IntervalS float64         `json:"interval_s"`
	Command   []string        `json:"command,omitempty"`
	NICs      []irq.NICQueues `json:"nics"`
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
	Command     *commandResult  `json:"command,omitempty"`
	Interrupted bool            `json:"interrupted"`
}

// record writes JSON lines to a file, one write per line, so every completed
// sample is in the file even if nicdiag is killed next.
type record struct {
	f   *os.File
	err error
}

func openRecord(path string) (*record, error) {
	if path == "" {
		return &record{}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &record{f: f}, nil
}

func (r *record) write(v any) {
	if r.f == nil || r.err != nil {
		return
	}
	r.err = writeLine(r.f, v)
}

func (r *record) close() {
	if r.f != nil {
		if err := r.f.Close(); err != nil && r.err == nil {
			r.err = err
		}
	}
}

// writeLine writes v as one line of JSON with a single Write.
func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
