package fsroot

import (
	"fmt"
	"io/fs"
	"slices"
)

// ReadInto reads the whole file at kernel path p into buf's storage,
// growing it when needed, and returns the contents; it refuses what Open
// refuses, and a file over max bytes with an error wrapping ErrTooLarge.
// It reads to EOF (/proc files report size 0). On Unix it does so with
// open, fstat, read and close alone, without an *os.File: for the many
// small /proc files a sampler reads again at every interval. In a snapshot
// the open is beneath the root, as Open's is.
func (r Root) ReadInto(p string, buf []byte, max int) ([]byte, error) {
	if err := r.spent("open", p); err != nil {
		return buf[:0], err
	}
	buf, err := r.readInto(p, buf[:0], max)
	if err != nil {
		return buf[:0], err
	}
	if len(buf) > max {
		return buf[:0], &fs.PathError{Op: "read", Path: r.Path(p), Err: fmt.Errorf("%w (over %d bytes)", ErrTooLarge, max)}
	}
	return buf, nil
}

// grow makes room to read into buf: at least 512 bytes, doubling when
// full, but never past limit+1 bytes in all (one more than a reader's cap
// tells a file over it), so a cap of 64 MiB never allocates 128.
func grow(buf []byte, limit int) []byte {
	if len(buf) < cap(buf) {
		return buf
	}
	return slices.Grow(buf, max(1, min(max(512, cap(buf)), limit+1-len(buf))))
}
