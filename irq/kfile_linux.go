package irq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"strconv"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"golang.org/x/sys/unix"
)

// kernelFS reports whether fd is on procfs or sysfs, whose reads fail
// once the object behind the file is gone.
func kernelFS(fd int) bool {
	var st unix.Statfs_t
	for {
		err := unix.Fstatfs(fd, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		return st.Type == unix.PROC_SUPER_MAGIC || st.Type == unix.SYSFS_MAGIC
	}
}

// readDirIDs lists the names of the directory at k.path that are pids
// (/proc/PID/task's TIDs) into ids, reading it into buf's storage; the
// directory is kept open and listed again from its start at the next
// call. It returns the buffer for the next call.
func (k *kfile) readDirIDs(r fsroot.Root, buf []byte, ids []int) ([]byte, []int, error) {
	if k.f != nil {
		var err error
		if buf, ids, err = k.relist(buf, ids[:0]); err == nil {
			return buf, ids, nil
		}
		k.close()
	}
	f, err := r.OpenDir(k.path)
	if err != nil {
		return buf, ids[:0], err
	}
	k.f, k.fd, k.kernel = f, int(f.Fd()), kernelFS(int(f.Fd())) // directories are not watched: see relist
	if buf, ids, err = k.relist(buf, ids[:0]); err != nil {
		k.close()
		if errors.Is(err, errStale) {
			err = &fs.PathError{Op: "open", Path: f.Name(), Err: fs.ErrNotExist}
		}
	}
	return buf, ids, err
}

// relist lists the held directory from its start. Off procfs, a removed
// directory is told by its link count: inotify does not report the rmdir
// of a directory held open to the directory itself.
func (k *kfile) relist(buf []byte, ids []int) ([]byte, []int, error) {
	if !k.kernel {
		var st unix.Stat_t
		if err := fstat(k.fd, &st); err != nil {
			return buf, ids, &fs.PathError{Op: "stat", Path: k.f.Name(), Err: err}
		}
		if st.Nlink == 0 {
			return buf, ids, errStale
		}
	}
	if _, err := unix.Seek(k.fd, 0, 0); err != nil {
		return buf, ids, &fs.PathError{Op: "seek", Path: k.f.Name(), Err: err}
	}
	if cap(buf) < 8192 {
		buf = make([]byte, 0, 8192)
	}
	b := buf[:cap(buf)]
	for {
		n, err := unix.Getdents(k.fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, ids, &fs.PathError{Op: "readdirent", Path: k.f.Name(), Err: err}
		}
		if n == 0 {
			return buf, ids, nil
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8,
		// then the name, NUL-terminated.
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(b[off+16:]))
			if reclen < 19 || off+reclen > n {
				return buf, ids, &fs.PathError{Op: "readdirent", Path: k.f.Name(), Err: errors.New("bad dirent")}
			}
			name := b[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if id, ok := pidBytes(name); ok {
				ids = append(ids, id)
			}
			off += reclen
		}
	}
}

// fileWatch is an inotify instance that watches the held files off procfs
// and sysfs for IN_ATTRIB (their link count changed: unlinked, or a file
// renamed over them), IN_DELETE_SELF and IN_MOVE_SELF. poll, once a
// reading, closes the files whose watch fired: one read, answered EAGAIN
// when nothing happened, in place of an fstat per file and read. The zero
// value opens its instance on first use; where it cannot, files fall back
// to the link count.
type fileWatch struct {
	fd    int // 0: not opened yet; -1: none
	files map[int32][]*kfile
	buf   []byte
}

const watchMask = unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

// add watches k's open file: its own inode, through /proc/self/fd, not
// whatever its path names by now.
func (w *fileWatch) add(k *kfile) {
	if w.fd == 0 {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			fd = -1
		}
		w.fd = fd
		w.files = map[int32][]*kfile{}
	}
	if w.fd < 0 {
		return
	}
	wd, err := unix.InotifyAddWatch(w.fd, "/proc/self/fd/"+strconv.Itoa(k.fd), watchMask)
	if err != nil || wd <= 0 {
		return // the link count then
	}
	k.wd = int32(wd)
	w.files[k.wd] = append(w.files[k.wd], k)
}

// remove stops watching k.
func (w *fileWatch) remove(k *kfile) {
	fs := w.files[k.wd]
	for i, f := range fs {
		if f == k {
			fs = append(fs[:i], fs[i+1:]...)
			break
		}
	}
	if len(fs) == 0 {
		delete(w.files, k.wd)
		unix.InotifyRmWatch(w.fd, uint32(k.wd))
	} else {
		w.files[k.wd] = fs
	}
	k.wd = 0
}

// poll closes the watched files that were unlinked, moved or deleted
// since the last poll (all of them when the event queue overflowed); their
// next read opens their path again.
func (w *fileWatch) poll() {
	if w == nil || w.fd <= 0 {
		return
	}
	if w.buf == nil {
		w.buf = make([]byte, 16<<10)
	}
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return // EAGAIN: nothing more
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(w.buf[off:]))
			mask := binary.NativeEndian.Uint32(w.buf[off+4:])
			off += unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(w.buf[off+12:]))
			if mask&unix.IN_Q_OVERFLOW != 0 {
				w.closeAll()
				continue
			}
			for len(w.files[wd]) > 0 {
				w.files[wd][0].close() // removes it
			}
		}
	}
}

// closeAll closes every watched file.
func (w *fileWatch) closeAll() {
	for wd := range w.files {
		for len(w.files[wd]) > 0 {
			w.files[wd][0].close()
		}
	}
}

// close closes the inotify instance; the files it watched must be closed
// first.
func (w *fileWatch) close() {
	if w != nil && w.fd > 0 {
		unix.Close(w.fd)
		w.fd = 0
	}
}
