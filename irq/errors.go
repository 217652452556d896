package irq

import (
	"errors"
	"fmt"

	"github.com/nicdiag/nicdiag/internal/genl"
)

// ErrMalformed is wrapped by every parse error: the file did not have the
// shape the kernel writes.
var ErrMalformed = errors.New("malformed")

// errNoCPUs is returned when a header names no CPU column.
var errNoCPUs = errors.New("no CPU columns")

// ParseError says which file and line could not be parsed.
type ParseError struct {
	File string // "/proc/interrupts"
	Line int    // 1-based; 0 when not about one line
	Err  error
}

// Error renders "/proc/interrupts line 3: ...".
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrMalformed) true for every ParseError.
func (e *ParseError) Is(target error) bool { return target == ErrMalformed }

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// ErrTooLarge is wrapped by the error for a /proc/interrupts beyond what
// one parse keeps: more than 16 Mi counts (128 MiB: 8192 CPUs × 2048
// rows), 256 Ki rows, or a line over 1 MiB. Such a file is refused, not
// truncated.
var ErrTooLarge = errors.New("too large")

// netlinkErr makes a malformed netlink reply (genl.ErrMalformed) an error
// that errors.Is also matches with ErrMalformed.
func netlinkErr(err error) error { return genl.Malformed(err, ErrMalformed) }
