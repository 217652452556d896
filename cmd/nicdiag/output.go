package main

import (
	"encoding/json"
	"fmt"

	"github.com/nicdiag/nicdiag/monitor"
)

// jsonSchema versions every JSON document nicdiag writes, monitor records
// included (monitor.Schema says when it changes).
const jsonSchema = monitor.Schema

// writeJSON writes v as indented JSON followed by a newline.
func (e *env) writeJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding JSON: %w", err)
	}
	b = append(b, '\n')
	_, err = e.stdout.Write(b)
	return err
}
