package nicinfo

import (
	"errors"
	"io/fs"
	"strings"
)

// ErrNoInterface is wrapped by Get when no interface has the name asked for,
// and by LiveEthtool's Answers when the kernel has no such interface
// (ENODEV). errors.Is(err, os.ErrNotExist) also holds for it.
var ErrNoInterface error = noInterfaceError{}

type noInterfaceError struct{}

func (noInterfaceError) Error() string        { return "no such network interface" }
func (noInterfaceError) Is(target error) bool { return target == fs.ErrNotExist }

// ErrNoPCIIDs is named in NIC.Missing ("pci.names: ...") and returned by the
// pci.ids loader when no pci.ids file was found. errors.Is(err,
// os.ErrNotExist) also holds for it.
var ErrNoPCIIDs error = noPCIIDsError{}

type noPCIIDsError struct{}

func (noPCIIDsError) Error() string        { return "no pci.ids found" }
func (noPCIIDsError) Is(target error) bool { return target == fs.ErrNotExist }

// ErrNoAnswers is returned by an EthtoolSource that has nothing for an
// interface (a snapshot without ethtool/IFACE.json). errors.Is(err,
// os.ErrNotExist) also holds for it.
var ErrNoAnswers error = noAnswersError{}

type noAnswersError struct{}

func (noAnswersError) Error() string        { return "no ethtool answers recorded" }
func (noAnswersError) Is(target error) bool { return target == fs.ErrNotExist }

// ErrMalformed is wrapped by the value parsers for input they cannot read,
// and by an EthtoolSource's Answers for an ethtool/IFACE.json it cannot.
var ErrMalformed = errors.New("malformed value")

// errPrefix starts the message of every error the package returns, once.
const errPrefix = "nicinfo: "

// pkgError is an error as the package's exported functions return it:
// errPrefix and the wrapped error's text; errors.Is and errors.As see
// through it. Inside the package errors carry no prefix, and reason (the
// wording of NIC.Missing) takes it off again.
type pkgError struct{ err error }

func (e *pkgError) Error() string { return errPrefix + e.err.Error() }
func (e *pkgError) Unwrap() error { return e.err }

// wrapErr gives err the package prefix unless it has it already; nil stays
// nil.
func wrapErr(err error) error {
	if err == nil || strings.HasPrefix(err.Error(), errPrefix) {
		return err
	}
	return &pkgError{err}
}

// unwrapPkg takes the package prefix off an error the package returned.
func unwrapPkg(err error) error {
	if pe, ok := err.(*pkgError); ok {
		return pe.err
	}
	return err
}

// answerError is an error an EthtoolAnswers holds as its text (the live
// source's errno text, or a snapshot's): the kernel's refusal ("operation
// not permitted", EPERM; "permission denied", EACCES) still matches
// os.ErrPermission.
type answerError string

func (e answerError) Error() string { return string(e) }
func (e answerError) Is(target error) bool {
	return target == fs.ErrPermission && (e == "operation not permitted" || e == "permission denied")
}
