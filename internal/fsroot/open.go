package fsroot

import (
	"errors"
	"math"
	"os"
)

// ErrNotRegular is returned for a file to be read that is not a regular
// file: in a snapshot a FIFO would block the reader for ever and a device
// could be read without end. Every sysfs and procfs attribute is a regular
// file, so the live host never meets it. errors.Is(err, fs.ErrPermission)
// also holds for it.
var ErrNotRegular error = refusal("not a regular file")

// ErrTooLarge is returned for a file larger than the reader's cap; it is
// refused, not truncated.
var ErrTooLarge = errors.New("file too large")

// Open opens the file at kernel path p for reading. In a snapshot every
// symlink on the way must stay inside the root (else ErrEscape); anywhere, a
// FIFO, socket or device is refused with ErrNotRegular, without blocking.
// The caller closes the file.
func (r Root) Open(p string) (*os.File, error) {
	if err := r.spent("open", p); err != nil {
		return nil, err
	}
	return r.open(p)
}

// ReadFileMax reads the whole file at kernel path p, confined as Open is,
// refusing one larger than max bytes with an error wrapping ErrTooLarge.
func (r Root) ReadFileMax(p string, max int64) ([]byte, error) {
	b, err := r.ReadInto(p, nil, int(min(max, math.MaxInt32)))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// OpenFile opens the host file name (a path on this machine, not under any
// root: a pci.ids named by the caller) for reading, refusing anything but a
// regular file with ErrNotRegular, without blocking on a FIFO.
func OpenFile(name string) (*os.File, error) { return openRegular(name) }
