//go:build unix

package fsroot

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openRegular opens with O_NONBLOCK, so that opening a FIFO returns at once
// instead of waiting for a writer, checks the type on the open descriptor
// (no window between the check and the open), and then puts the descriptor
// back in blocking mode for the reads.
func openRegular(name string) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
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
