package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/nicdiag/nicdiag/monitor"
)

// jsonSchema versions every JSON document nicdiag writes, monitor records
// included (monitor.Schema says when it changes).
const jsonSchema = monitor.Schema

// writeJSON writes v as indented JSON followed by a newline.
func (e *env) writeJSON(v any) error { return e.writeJSONTo(e.stdout, v) }

// writeJSONTo writes v to w as writeJSON does.
func (e *env) writeJSONTo(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding JSON: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}
