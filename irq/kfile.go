package irq

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"golang.org/x/sys/unix"
)

// The sampler reads the same few hundred files at every interval. Opening
// one costs a path walk (under a snapshot root, an lstat per component to
// keep symlinks inside it), a file table entry and, in sysfs, a seq_file;
// re-reading an open one from offset 0 (pread) costs the read alone. The
// kernel regenerates a procfs or sysfs file at every read from offset 0
// (seq_read_iter restarts its iterator), so a kfile is opened once, through
// the root (confined, refusing what Root.Open refuses), and read again from
// offset 0 at every reading.
//
// A held file must not outlive what it names:
//   - procfs and sysfs fail a read of an object that is gone (ESRCH for a
//     task that exited, ENODEV for a removed device); the kfile then opens
//     the path again, which names the new object or is not there.
//   - elsewhere (a snapshot directory, a test's tree) a file replaced or
//     removed keeps its old contents readable: a fileWatch (inotify) tells
//     the sampler at each reading which held files were unlinked, or, where
//     there is none, the link count (0 once unlinked) is checked at every
//     read; such a file is opened again by path.
//
// A symlink on the path that is re-pointed while the file is held is not
// noticed. In sysfs the held files are a PCI function's, a CPU's and a
// network interface's statistics: the first two cannot be renamed, and on
// the live host an interface's counters are asked over netlink by name at
// each reading (sysfs's files are read only for an interface netlink does
// not see, or under a root); a task's files follow the task, not its pid.

// kfile is one kernel file, kept open between readings. The zero value
// with path set is closed and opens on first read.
type kfile struct {
	path string   // kernel path, as given to the root
	f    *os.File // nil while closed
	fd   int
	// kernel: on procfs or sysfs, where a read fails once the object is
	// gone; elsewhere the link count is checked.
	kernel bool
	// once: the file is one record (a sysfs attribute, a task's stat) that
	// a single read returns whole when the buffer is larger than it: a
	// short read is the end.
	once bool
	// w, when set, watches the file off procfs and sysfs (wd > 0 while
	// it does), in place of the link count.
	w  *fileWatch
	wd int32
}

// errStale says a held file was unlinked: it is opened again by path.
var errStale = errors.New("stale")

// close closes the file; the next read opens it again.
func (k *kfile) close() {
	if k.wd > 0 {
		k.w.remove(k)
	}
	if k.f != nil {
		k.f.Close()
		k.f = nil
	}
}

// attach makes f the held file.
func (k *kfile) attach(f *os.File) {
	k.f, k.fd = f, int(f.Fd())
	k.kernel = kernelFS(k.fd)
	if !k.kernel && k.w != nil {
		k.w.add(k)
	}
}

// read reads the whole file into buf's storage (growing it, by no more
// than needed past max+1 bytes) and returns the contents. A file over max
// bytes is refused with an error wrapping fsroot.ErrTooLarge. A held file
// that fails (gone, unlinked, an error) is opened once again by path and
// read; an error from that stands and leaves the file closed.
func (k *kfile) read(r fsroot.Root, buf []byte, max int) ([]byte, error) {
	if k.f != nil {
		b, err := k.reread(buf, max)
		if err == nil || errors.Is(err, fsroot.ErrTooLarge) {
			return b, err
		}
		k.close()
	}
	f, err := r.Open(k.path)
	if err != nil {
		return buf[:0], err
	}
	k.attach(f)
	b, err := k.reread(buf, max)
	if errors.Is(err, errStale) { // unlinked between the open and the read
		err = &fs.PathError{Op: "open", Path: f.Name(), Err: fs.ErrNotExist}
	}
	if err != nil && !errors.Is(err, fsroot.ErrTooLarge) {
		k.close()
	}
	return b, err
}

// ensure opens the file when it is closed, or off procfs and sysfs no
// longer linked; it reports whether it opened it now.
func (k *kfile) ensure(r fsroot.Root) (opened bool, err error) {
	if k.f != nil && !k.kernel && k.wd == 0 {
		var st unix.Stat_t
		if err := fstat(k.fd, &st); err != nil || st.Nlink == 0 {
			k.close()
		}
	}
	if k.f != nil {
		return false, nil
	}
	f, err := r.Open(k.path)
	if err != nil {
		return false, err
	}
	k.attach(f)
	return true, nil
}

// reread reads the held file from offset 0.
func (k *kfile) reread(buf []byte, max int) ([]byte, error) {
	buf = buf[:0]
	whole := k.once
	if !k.kernel {
		if k.wd == 0 {
			var st unix.Stat_t
			if err := fstat(k.fd, &st); err != nil {
				return buf, &fs.PathError{Op: "stat", Path: k.f.Name(), Err: err}
			}
			if st.Nlink == 0 {
				return buf, errStale
			}
			if st.Size >= 0 && st.Size <= int64(max) && cap(buf) <= int(st.Size) {
				buf = make([]byte, 0, int(st.Size)+512)
			}
		}
		// A regular file's read returns up to its end: a short read is the
		// whole of it.
		whole = true
	}
	for {
		if len(buf) == cap(buf) {
			if len(buf) > max {
				return buf[:0], &fs.PathError{Op: "read", Path: k.f.Name(), Err: fmt.Errorf("%w (over %d bytes)", fsroot.ErrTooLarge, max)}
			}
			buf = growBuf(buf, max+1)
		}
		n, err := unix.Pread(k.fd, buf[len(buf):cap(buf)], int64(len(buf)))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf[:0], &fs.PathError{Op: "read", Path: k.f.Name(), Err: err}
		}
		short := len(buf)+n < cap(buf)
		buf = buf[:len(buf)+n]
		if len(buf) > max {
			return buf[:0], &fs.PathError{Op: "read", Path: k.f.Name(), Err: fmt.Errorf("%w (over %d bytes)", fsroot.ErrTooLarge, max)}
		}
		if n == 0 || whole && short {
			return buf, nil
		}
	}
}

// growBuf makes room in buf: doubling, at least 4 KiB (a sysfs page), at
// most to limit unless buf is there already.
func growBuf(buf []byte, limit int) []byte {
	n := max(2*cap(buf), 4096)
	if n > limit {
		n = max(limit, cap(buf)+1)
	}
	nb := make([]byte, len(buf), n)
	copy(nb, buf)
	return nb
}

// fstat is unix.Fstat retried on EINTR.
func fstat(fd int, st *unix.Stat_t) error {
	for {
		if err := unix.Fstat(fd, st); err != unix.EINTR {
			return err
		}
	}
}

// kfiles are kernel files held open by a key (a TID, a CPU, an interface),
// dropped when a reading no longer reads them; w watches them.
type kfiles[K comparable] struct {
	m     map[K]*kfileEntry
	stamp uint32
	w     *fileWatch
}

type kfileEntry struct {
	kfile
	stamp uint32
}

// get returns the file for key, whose path path makes on first use, and
// marks it read in this round.
func (c *kfiles[K]) get(key K, path func() string, once bool) *kfile {
	e := c.m[key]
	if e == nil {
		if c.m == nil {
			c.m = make(map[K]*kfileEntry)
		}
		e = &kfileEntry{kfile: kfile{path: path(), once: once, w: c.w}}
		c.m[key] = e
	}
	e.stamp = c.stamp
	return &e.kfile
}

// sweep closes and forgets the files not read since the last sweep.
func (c *kfiles[K]) sweep() {
	for k, e := range c.m {
		if e.stamp != c.stamp {
			e.close()
			delete(c.m, k)
		}
	}
	c.stamp++
}

// closeAll closes every file.
func (c *kfiles[K]) closeAll() {
	for k, e := range c.m {
		e.close()
		delete(c.m, k)
	}
}
