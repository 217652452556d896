package nicinfo

import (
	"errors"
	"io/fs"
)

// ErrNoInterface is wrapped by Get when no interface has the name asked for.
// errors.Is(err, os.ErrNotExist) also holds for it.
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

// ErrMalformed is wrapped by the value parsers for input they cannot read.
var ErrMalformed = errors.New("malformed value")
