//go:build unix

package fsroot

// Each reader of Root, on the live host (by path) and in a snapshot
// (beneath the root).

import (
	"io/fs"
	"os"
	"path"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// open opens the regular file at p: by path on the live host, beneath the
// root in a snapshot.
func (r Root) open(p string) (*os.File, error) {
	if r.dir == "" {
		return openRegular(r.Path(p))
	}
	return r.openSnap(p)
}

// readInto reads the regular file at p into buf (see ReadInto).
func (r Root) readInto(p string, buf []byte, max int) ([]byte, error) {
	if r.dir == "" {
		return readRegularInto(r.Path(p), buf, max)
	}
	return r.readIntoSnap(p, buf, max)
}

// readDir lists the directory at p, unsorted.
func (r Root) readDir(p string) ([]string, error) {
	if r.dir != "" {
		return r.readDirSnap(p)
	}
	hp := r.Path(p)
	fd, err := retry(func() (int, error) { return unix.Open(hp, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0) })
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: hp, Err: err}
	}
	names, err := dirNames(fd)
	if err != nil {
		return nil, &fs.PathError{Op: "readdirent", Path: hp, Err: err}
	}
	return names, nil
}

// exists reports whether p exists, symlinks followed.
func (r Root) exists(p string) bool {
	if r.dir != "" {
		return r.existsSnap(p)
	}
	var st unix.Stat_t
	return unix.Stat(r.Path(p), &st) == nil
}

// readlink reads the symlink at p.
func (r Root) readlink(p string) (string, error) {
	if r.dir != "" {
		return r.readlinkSnap(p)
	}
	return os.Readlink(r.Path(p))
}

// fdKernelPath returns the kernel path of fd, opened under r: its path from
// /proc/self/fd with the root's real path (read once per handle) taken off.
// ok is false when /proc cannot say, or says something that is not a clean
// path under the root (a deleted file, a path outside this namespace).
func (r Root) fdKernelPath(fd int) (string, bool) {
	prefix := ""
	if r.dir != "" {
		dfd, h, err := r.dirfd()
		if err != nil {
			return "", false
		}
		rp := h.real.Load()
		if rp == nil {
			s, ok := fdPath(dfd)
			runtime.KeepAlive(h)
			if !ok {
				return "", false
			}
			rp = &s
			h.real.Store(rp)
		}
		if prefix = *rp; prefix == "/" {
			prefix = ""
		}
	}
	got, ok := fdPath(fd)
	if !ok {
		return "", false
	}
	if got == prefix {
		return "/", true
	}
	k, found := strings.CutPrefix(got, prefix)
	if !found || k == "" || k[0] != '/' || path.Clean(k) != k || strings.HasSuffix(k, " (deleted)") {
		return "", false
	}
	return k, true
}

// linkBase is LinkBase: in a snapshot the link's directory is opened
// beneath the root, and a target that leaves the root (absolute, or
// climbing above it from the directory's real place) is ErrEscape: it names
// nothing in the snapshot.
func (r Root) linkBase(p string) (string, error) {
	if r.dir == "" {
		t, err := os.Readlink(r.Path(p))
		if err != nil {
			return "", err
		}
		return path.Base(t), nil
	}
	fd, dir, t, err := r.linkAt(p)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	if path.IsAbs(t) {
		return "", &fs.PathError{Op: "readlink", Path: r.Path(p), Err: ErrEscape}
	}
	if strings.Contains(t, "..") {
		kdir, ok := r.fdKernelPath(fd)
		if !ok {
			if kdir, err = r.Resolve(dir, nil); err != nil {
				return "", err
			}
		}
		if Escapes(kdir, t) {
			return "", &fs.PathError{Op: "readlink", Path: r.Path(p), Err: ErrEscape}
		}
	}
	return path.Base(t), nil
}

// mode is Mode: in a snapshot the directory is opened beneath the root and
// the last element looked at with fstatat, not followed.
func (r Root) mode(p string) (fs.FileMode, error) {
	var st unix.Stat_t
	if r.dir == "" {
		if err := unix.Lstat(r.Path(p), &st); err != nil {
			return 0, &fs.PathError{Op: "lstat", Path: r.Path(p), Err: err}
		}
		return fileMode(uint32(st.Mode)), nil
	}
	clean := path.Clean("/" + p)
	dir, base := path.Dir(clean), path.Base(clean)
	if base == "/" {
		dir, base = "/", "."
	}
	fd, err := r.openBeneath("open", dir, unix.O_RDONLY|oSearch|unix.O_DIRECTORY)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	if base == ".." {
		return 0, &fs.PathError{Op: "lstat", Path: r.Path(p), Err: unix.EINVAL}
	}
	if err := unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, &fs.PathError{Op: "lstat", Path: r.Path(p), Err: err}
	}
	return fileMode(uint32(st.Mode)), nil
}

// fileMode converts a stat mode to an fs.FileMode, as os.Lstat does.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// openDirFile opens the directory at p for listing (see OpenDir).
func (r Root) openDirFile(p string) (*os.File, error) {
	if r.dir == "" {
		return openDir(r.Path(p))
	}
	fd, err := r.openBeneath("open", p, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), r.Path(p)), nil
}
