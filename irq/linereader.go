package irq

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"golang.org/x/sys/unix"
)

// readInterrupts parses /proc/interrupts, held open in k, into x as
// parseInterrupts does, reading it in chunks into buf's storage, and
// returns the buffer for the next call. A held file whose read fails is
// opened again and read once more.
func readInterrupts(r fsroot.Root, k *kfile, buf []byte, x *Interrupts, mode parseMode, ref *Interrupts, keep []bool) ([]byte, error) {
	for try := 0; ; try++ {
		fresh, err := k.ensure(r)
		if err != nil {
			return buf, err
		}
		lr := lineReader{buf: buf[:cap(buf)], k: k}
		err = parseInterrupts(&lr, x, mode, ref, keep)
		buf = lr.buf[:0]
		if err != nil && !fresh && try == 0 && isReadError(err) {
			k.close()
			continue
		}
		return buf, err
	}
}

// lineReader yields the lines of a byte slice, or of a file read in chunks
// into buf from offset 0: memory bounded by the chunk and the longest line
// (maxLine), whatever the file's size.
type lineReader struct {
	buf  []byte
	r, w int // buf[r:w] is read and not yet returned
	scan int // buf[r:scan] holds no newline
	k    *kfile
	off  int64 // the file offset buf[w] comes from
	eof  bool
	line int // the number of the line last returned, from 1
	// limit caps the counts kept (0: maxCounts).
	limit int
	// at, when set, reads in place of k (tests: chunks of any size);
	// size is the buffer's first size (0: chunk).
	at   func(p []byte, off int64) (int, error)
	size int
}

func (lr *lineReader) maxCounts() int {
	if lr.limit > 0 {
		return lr.limit
	}
	return maxCounts
}

// chunk is the size of the reads of a lineReader over a file.
const chunk = 256 << 10

// next returns the next line without its newline (the last may lack one);
// ok is false at the end. The line aliases buf: valid until the next call.
func (lr *lineReader) next() (line []byte, ok bool, err error) {
	for {
		if i := bytes.IndexByte(lr.buf[lr.scan:lr.w], '\n'); i >= 0 {
			line = lr.buf[lr.r : lr.scan+i]
			lr.r = lr.scan + i + 1
			lr.scan = lr.r
			lr.line++
			return line, true, nil
		}
		lr.scan = lr.w
		if lr.eof {
			if lr.r == lr.w {
				return nil, false, nil
			}
			line = lr.buf[lr.r:lr.w]
			lr.r, lr.scan = lr.w, lr.w
			lr.line++
			return line, true, nil
		}
		if err := lr.fill(); err != nil {
			return nil, false, err
		}
	}
}

// fill reads more into buf: after what it holds, else, when full, after
// moving the unreturned bytes to its front, else into a larger one.
func (lr *lineReader) fill() error {
	if lr.w == len(lr.buf) && lr.r > 0 {
		n := copy(lr.buf, lr.buf[lr.r:lr.w])
		lr.scan -= lr.r
		lr.r, lr.w = 0, n
	}
	if lr.w == len(lr.buf) {
		if lr.w >= maxLine {
			return fmt.Errorf("%s line %d: %w: over %d bytes", interruptsFile, lr.line+1, ErrTooLarge, maxLine)
		}
		size := lr.size
		if size == 0 {
			size = chunk
		}
		nb := make([]byte, max(size, 2*len(lr.buf)))
		copy(nb, lr.buf[:lr.w])
		lr.buf = nb
	}
	for {
		var n int
		var err error
		if lr.at != nil {
			n, err = lr.at(lr.buf[lr.w:], lr.off)
		} else {
			n, err = unix.Pread(lr.k.fd, lr.buf[lr.w:], lr.off)
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if lr.at != nil {
				return err
			}
			return &fs.PathError{Op: "read", Path: lr.k.f.Name(), Err: err}
		}
		lr.w += n
		lr.off += int64(n)
		lr.eof = n == 0
		return nil
	}
}

// isReadError reports whether err is a failed read (of a held file).
func isReadError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "read"
}
