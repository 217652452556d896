//go:build unix

package fsroot

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// readRegularInto is openRegular and a read to EOF on the bare descriptor.
// It stops once more than max bytes are in; O_NONBLOCK stays set, which
// regular files ignore.
func readRegularInto(name string, buf []byte, max int) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return buf, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return buf, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return buf, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	for len(buf) <= max {
		buf = grow(buf)
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	return buf, nil
}
