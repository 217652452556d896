package stack

import (
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// numericEntries calls f with each entry of the directory d whose name is
// a positive decimal number (a pid, a tid, a descriptor), reading it from
// its start with getdents into buf's storage, and returns the buffer.
// Nothing is allocated per entry.
func numericEntries(d *os.File, buf []byte, f func(n int)) ([]byte, error) {
	if cap(buf) < 32<<10 {
		buf = make([]byte, 32<<10)
	}
	buf = buf[:cap(buf)]
	fd := int(d.Fd())
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return buf, err
	}
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, err
		}
		if n <= 0 {
			return buf, nil
		}
		// struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16,
		// d_type u8, d_name NUL-terminated.
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			if v, ok := decimal(b[19:reclen]); ok {
				f(v)
			}
			b = b[reclen:]
		}
	}
}
