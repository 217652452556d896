package fsroot

import (
	"context"
	"io/fs"
	"time"
)

// ErrBudget is returned by every read from a root whose deadline (see
// WithDeadline) has passed: the read is not attempted. errors.Is(err,
// context.DeadlineExceeded) also holds for it.
var ErrBudget error = budgetError{}

type budgetError struct{}

func (budgetError) Error() string        { return "time budget for the root spent" }
func (budgetError) Is(target error) bool { return target == context.DeadlineExceeded }
func (budgetError) Timeout() bool        { return true }

// WithDeadline returns r with a deadline: once t has passed, every read from
// it fails at once with an error wrapping ErrBudget. The zero time removes
// the deadline. Copies of a Root share its directory, not its deadline.
func (r Root) WithDeadline(t time.Time) Root {
	r.deadline = t
	return r
}

// WithBudget is WithDeadline(time.Now().Add(d)); d <= 0 removes the
// deadline.
func (r Root) WithBudget(d time.Duration) Root {
	if d <= 0 {
		return r.WithDeadline(time.Time{})
	}
	return r.WithDeadline(time.Now().Add(d))
}

// Deadline returns r's deadline and whether it has one.
func (r Root) Deadline() (time.Time, bool) { return r.deadline, !r.deadline.IsZero() }

// Err returns an error wrapping ErrBudget once r's deadline has passed, else
// nil: a caller about to hand the root's directory to code that builds its
// own Root can stop first.
func (r Root) Err() error { return r.spent("read", "/") }

// spent returns the error for a read of p when the deadline has passed.
func (r Root) spent(op, p string) error {
	if r.deadline.IsZero() || time.Now().Before(r.deadline) {
		return nil
	}
	return &fs.PathError{Op: op, Path: r.Path(p), Err: ErrBudget}
}
