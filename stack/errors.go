package stack

import (
	"errors"
	"fmt"
)

// ErrMalformed is wrapped by every parse error: the input did not have the
// shape the kernel writes.
var ErrMalformed = errors.New("stack: malformed")

// ErrNotApplicable is wrapped by the error of a source this kernel does not
// have (conntrack not built or not loaded, sock_diag without UDP support):
// the layer is not judged, and it is no failure.
var ErrNotApplicable = errors.New("stack: not applicable")

// ErrTooLarge is wrapped by the error for an input beyond what a parse
// keeps (a /proc file over 4 MiB, a line over 64 KiB, more than 4096 CPUs
// in a statistics table).
var ErrTooLarge = errors.New("stack: too large")

// ParseError says which file (or netlink message) and line could not be
// parsed.
type ParseError struct {
	File string // "/proc/net/snmp", "sock_diag"
	Line int    // 1-based; 0 when not about one line
	Err  error
}

// Error renders "stack: /proc/net/snmp line 3: ...".
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("stack: %s line %d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("stack: %s: %v", e.File, e.Err)
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrMalformed) true for every ParseError.
func (e *ParseError) Is(target error) bool { return target == ErrMalformed }

// malformed returns a ParseError for file and line.
func malformed(file string, line int, format string, args ...any) error {
	return &ParseError{File: file, Line: line, Err: fmt.Errorf(format, args...)}
}
