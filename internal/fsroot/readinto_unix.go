//go:build unix

package fsroot

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// readRegularInto is openRegular and a read to EOF on the bare descriptor
// (readFD).
func readRegularInto(name string, buf []byte, max int) ([]byte, error) {
	fd, err := retry(func() (int, error) {
		return unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	})
	if err != nil {
		return buf, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	buf, op, err := readFD(fd, buf, max, false)
	if err != nil {
		return buf, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return buf, nil
}

// readFD refuses fd unless it is a regular file (ErrNotRegular), then reads
// it to EOF into buf, stopping once more than max bytes are in. O_NONBLOCK
// may stay set: regular files ignore it. The caller closes fd, and names
// the file in an error (op is the step that failed): only a failed read
// pays for the name. sized says the file's size may be trusted (a
// snapshot's file): one over max and over 4096 bytes (the most sysfs
// claims for an attribute, should a root be a bind mount of a live /sys)
// is refused before any read.
func readFD(fd int, buf []byte, max int, sized bool) (_ []byte, op string, _ error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return buf, "stat", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return buf, "open", ErrNotRegular
	}
	if sized && st.Size > int64(max) && st.Size > 4096 {
		return buf, "read", fmt.Errorf("%w (over %d bytes)", ErrTooLarge, max)
	}
	if cap(buf) == 0 && st.Size > 0 && st.Size < 512 {
		buf = make([]byte, 0, st.Size+1) // a snapshot's true size; sysfs says 4096
	}
	for len(buf) <= max {
		buf = grow(buf, max)
		n, err := unix.Read(fd, buf[len(buf):min(cap(buf), max+1)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, "read", err
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	return buf, "", nil
}
