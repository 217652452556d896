package pcie

import (
	"errors"
	"os"
)

// Errors returned by this package. Each is wrapped with context; test with
// errors.Is.
var (
	// ErrUnknownSpeed: the kernel printed "Unknown" for a link speed (no
	// link, or a speed it has no name for).
	ErrUnknownSpeed = errors.New("pcie: link speed unknown")
	// ErrBadSpeed: a link speed string is not in either kernel format.
	ErrBadSpeed = errors.New("pcie: malformed link speed")
	// ErrBadWidth: a link width string is not a lane count.
	ErrBadWidth = errors.New("pcie: malformed link width")
	// ErrConfigTruncated: a config space is shorter than its 64-byte header,
	// or a capability runs past the bytes read.
	ErrConfigTruncated = errors.New("pcie: config space truncated")
	// ErrNoDevice: a config space reads all ones (the device is gone or
	// does not answer).
	ErrNoDevice = errors.New("pcie: config space reads all ones (no device)")
	// ErrCapList: a capability list loops or points outside the config
	// space.
	ErrCapList = errors.New("pcie: broken capability list")
	// ErrBadAddress: a string is not a PCI address such as "0000:01:00.0".
	ErrBadAddress = errors.New("pcie: not a PCI address")
	// ErrNotFound: no PCI function with that address exists under the root.
	// errors.Is(err, os.ErrNotExist) also holds for it.
	ErrNotFound error = notFoundError{}
)

type notFoundError struct{}

func (notFoundError) Error() string        { return "pcie: no such PCI function" }
func (notFoundError) Is(target error) bool { return target == os.ErrNotExist }
