//go:build unix

package fsroot

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openRegular opens with O_NONBLOCK, so that opening a FIFO returns at once
// instead of waiting for a writer, and hands the descriptor to regularFile.
func openRegular(name string) (*os.File, error) {
	fd, err := retry(func() (int, error) {
		return unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return regularFile(fd, name)
}

// regularFile checks the type on the open descriptor (no window between
// the check and the open), refusing anything but a regular file with
// ErrNotRegular, and puts the descriptor back in blocking mode for the
// reads. It closes fd on failure.
func regularFile(fd int, name string) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openDir opens a directory for listing; O_DIRECTORY makes a FIFO (or any
// other non-directory) fail at once with ENOTDIR instead of blocking.
func openDir(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|unix.O_DIRECTORY, 0)
}
