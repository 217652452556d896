package fsroot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	hp, err := r.confined(p)
	if err != nil {
		return nil, err
	}
	return OpenFile(hp)
}

// ReadFileMax reads the whole file at kernel path p, confined as Open is,
// refusing one larger than max bytes with an error wrapping ErrTooLarge.
func (r Root) ReadFileMax(p string, max int64) ([]byte, error) {
	f, err := r.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &fs.PathError{Op: "read", Path: r.Path(p), Err: fmt.Errorf("%w (over %d bytes)", ErrTooLarge, max)}
	}
	return b, nil
}

// OpenFile opens the host file name (a path on this machine, not under any
// root: a pci.ids named by the caller) for reading, refusing anything but a
// regular file with ErrNotRegular, without blocking on a FIFO.
func OpenFile(name string) (*os.File, error) { return openRegular(name) }
