//go:build unix

package fsroot

// The reads under a snapshot root, each opened beneath it.

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// openSnap opens the regular file at p under a snapshot root, refusing
// anything else with ErrNotRegular before it is opened (openFileBeneath);
// the descriptor is in blocking mode.
func (r Root) openSnap(p string) (*os.File, error) {
	fd, err := r.openFileBeneath(p)
	if err != nil {
		return nil, err
	}
	return regularFile(fd, r.Path(p))
}

// readIntoSnap reads the regular file at p under a snapshot root into buf.
func (r Root) readIntoSnap(p string, buf []byte, max int) ([]byte, error) {
	fd, err := r.openFileBeneath(p)
	if err != nil {
		return buf, err
	}
	defer unix.Close(fd)
	buf, op, err := readFD(fd, buf, max, true)
	if err != nil {
		return buf, &fs.PathError{Op: op, Path: r.Path(p), Err: err}
	}
	return buf, nil
}

// forceNoProc makes tests take openFileBeneath's way without /proc.
var forceNoProc atomic.Bool

// errChanged is returned for a file that another took the place of
// between its type check and its open.
var errChanged = errors.New("changed while opened")

// openFileBeneath opens the file at p under a snapshot root for reading
// (O_NONBLOCK where the open is the check), with its type checked before
// a driver sees an open: where there is O_PATH, p is opened with it
// (which runs no device's or FIFO's open), fstat'ed, and only a regular
// file is opened for reading, through /proc/self/fd: the same inode, with
// no second lookup that a rename could redirect. Without /proc it is
// opened beneath the root again and kept only if it is the same inode
// (a device put in its place in between would have seen that open).
// Without O_PATH (the BSDs) the open comes first, non-blocking, and the
// caller's fstat refuses what is not a regular file.
func (r Root) openFileBeneath(p string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY
	if oSearch == 0 {
		return r.openBeneath("open", p, flags)
	}
	pfd, err := r.openBeneath("open", p, oSearch)
	if err != nil {
		return -1, err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return -1, &fs.PathError{Op: "stat", Path: r.Path(p), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return -1, &fs.PathError{Op: "open", Path: r.Path(p), Err: ErrNotRegular}
	}
	if !forceNoProc.Load() {
		if fd, err := reopen(pfd, unix.O_RDONLY|unix.O_NOCTTY); err == nil {
			return fd, nil
		}
	}
	fd, err := r.openBeneath("open", p, flags)
	if err != nil {
		return -1, err
	}
	var again unix.Stat_t
	if err := unix.Fstat(fd, &again); err != nil || again.Dev != st.Dev || again.Ino != st.Ino {
		unix.Close(fd)
		return -1, &fs.PathError{Op: "open", Path: r.Path(p), Err: errChanged}
	}
	return fd, nil
}

// readDirSnap lists the directory at p under a snapshot root, unsorted.
// O_DIRECTORY refuses a FIFO with ENOTDIR without opening it.
func (r Root) readDirSnap(p string) ([]string, error) {
	fd, err := r.openBeneath("open", p, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	names, err := dirNames(fd)
	if err != nil {
		return nil, &fs.PathError{Op: "readdirent", Path: r.Path(p), Err: err}
	}
	return names, nil
}

// existsSnap reports whether p, its symlinks followed beneath the root,
// exists under a snapshot root.
func (r Root) existsSnap(p string) bool {
	flags := oSearch // openat2 refuses O_PATH with other flags
	if oSearch == 0 {
		flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY
	}
	fd, err := r.openBeneath("open", p, flags)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// readlinkSnap reads the symlink at p under a snapshot root: its directory
// is opened beneath the root, the link read relative to it.
func (r Root) readlinkSnap(p string) (string, error) {
	fd, _, t, err := r.linkAt(p)
	if err != nil {
		return "", err
	}
	unix.Close(fd)
	return t, nil
}

// linkAt reads the symlink at p under a snapshot root through its
// directory dir, opened beneath the root as dirfd, which the caller closes
// (it is closed on error).
func (r Root) linkAt(p string) (dirfd int, dir, target string, err error) {
	clean := path.Clean("/" + p)
	dir, base := path.Dir(clean), path.Base(clean)
	if base == "/" || base == "." || base == ".." {
		return -1, "", "", &fs.PathError{Op: "readlink", Path: r.Path(p), Err: unix.EINVAL}
	}
	fd, err := r.openBeneath("open", dir, unix.O_RDONLY|oSearch|unix.O_DIRECTORY)
	if err != nil {
		return -1, "", "", err
	}
	t, err := readlinkat(fd, base)
	if err != nil {
		unix.Close(fd)
		return -1, "", "", &fs.PathError{Op: "readlink", Path: r.Path(p), Err: err}
	}
	return fd, dir, t, nil
}
