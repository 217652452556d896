package monitor

import (
	"errors"
	"fmt"
)

var (
	// ErrDone is returned by Run.Next once the run has ended and every
	// sample has been handed out.
	ErrDone = errors.New("monitor: the run has ended")
	// ErrInterval is returned by Start for an interval below MinInterval.
	ErrInterval = errors.New("monitor: the interval must be at least 10ms")
	// ErrCommandStart is wrapped by Start's error when the command of
	// WithCommand could not be started; the error also wraps the cause
	// (exec.ErrNotFound, fs.ErrNotExist, ...).
	ErrCommandStart = errors.New("monitor: cannot start the command")
	// ErrRecord is wrapped by Stop's error when the record could not be
	// written or closed (see RecordError).
	ErrRecord = errors.New("monitor: writing the record")
	// ErrEmpty is returned (wrapped) by ReadRecord when a record holds no
	// sample, and by report.Render for a record without samples.
	ErrEmpty = errors.New("monitor: the record holds no sample")
	// ErrMalformed is wrapped by ReadRecord's error for a line that is not
	// part of a monitor record.
	ErrMalformed = errors.New("malformed record")
)

// RecordError says why the record of a run is incomplete. The run itself
// succeeded: Stop returns its Result too.
type RecordError struct {
	// Err is the first write (or close) error; lines after it were not
	// written.
	Err error
}

// Error renders "monitor: writing the record: CAUSE".
func (e *RecordError) Error() string { return ErrRecord.Error() + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *RecordError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrRecord) true.
func (e *RecordError) Is(target error) bool { return target == ErrRecord }

// startError is a command that could not be started.
type startError struct {
	name string
	err  error
}

func (e *startError) Error() string {
	return fmt.Sprintf("monitor: cannot start %s: %v", e.name, e.err)
}

func (e *startError) Unwrap() []error { return []error{ErrCommandStart, e.err} }

// lineError is a record line that could not be decoded.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }

func (e *lineError) Unwrap() []error { return []error{ErrMalformed, e.err} }
