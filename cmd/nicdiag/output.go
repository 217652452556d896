package main

import (
	"encoding/json"
	"fmt"
)

// jsonSchema versions every JSON document nicdiag writes. It changes only
// when a field is removed or changes meaning; new fields may appear.
const jsonSchema = "nicdiag/v1"

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
