//go:build unix

package fsroot

import (
	"io/fs"
	"os"
	"path"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// handle is a snapshot root's directory, opened on first use and shared by
// the copies of the Root made from one New; its descriptor is closed once
// no copy is left. A later New opens the directory again, so a snapshot
// directory replaced on disk is seen anew.
type handle struct {
	mu   sync.Mutex
	fd   atomic.Int32           // the descriptor + 1; 0 until opened
	real atomic.Pointer[string] // the directory's real path, once known
}

// maxLinks is the kernel's limit on symlinks followed in one lookup
// (MAXSYMLINKS); the walk keeps the same.
const maxLinks = 40

// noOpenat2 is set once openat2 proved unavailable (ENOSYS: a kernel older
// than 5.6; EPERM: a seccomp filter that refuses it); forceWalk makes tests
// take the walk.
var noOpenat2, forceWalk atomic.Bool

// names reports whether h may serve a new Root of dir: not opened yet, or
// its descriptor is still the directory at dir (same device and inode).
func (h *handle) names(dir string) bool {
	fd := h.fd.Load()
	if fd == 0 {
		return true
	}
	var a, b unix.Stat_t
	if unix.Fstat(int(fd-1), &a) != nil || unix.Stat(dir, &b) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// dirfd returns the root directory's descriptor and the handle that owns
// it: the caller keeps the handle alive (runtime.KeepAlive) until it is
// done with the descriptor.
func (r Root) dirfd() (int, *handle, error) {
	h := r.h
	if h == nil {
		h = new(handle)
	}
	if fd := h.fd.Load(); fd > 0 {
		return int(fd - 1), h, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if fd := h.fd.Load(); fd > 0 {
		return int(fd - 1), h, nil
	}
	fd, err := retry(func() (int, error) {
		return unix.Open(r.dir, unix.O_RDONLY|oSearch|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return -1, nil, &fs.PathError{Op: "open", Path: r.dir, Err: err}
	}
	h.fd.Store(int32(fd + 1))
	runtime.AddCleanup(h, func(fd int) { unix.Close(fd) }, fd)
	return fd, h, nil
}

// retry calls open until it is not interrupted.
func retry(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// openBeneath opens kernel path p under a snapshot root with flags (plus
// O_CLOEXEC), following symlinks only while they stay beneath the root: a
// relative link that climbs above it, an absolute link and a ".." at the
// root are ErrEscape. The check and the open are one step: nothing can
// swap a component between them.
func (r Root) openBeneath(op, p string, flags int) (int, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return -1, &fs.PathError{Op: op, Path: r.Path(p), Err: unix.EINVAL}
	}
	dfd, h, err := r.dirfd()
	if err != nil {
		return -1, err
	}
	fd, err := openBeneathFD(dfd, rel(p), flags)
	runtime.KeepAlive(h)
	if err != nil {
		return -1, &fs.PathError{Op: op, Path: r.Path(p), Err: err}
	}
	return fd, nil
}

// rel is p relative to the root, as openat takes it: not cleaned, since
// ".." after a symlink is the parent of the link's target.
func rel(p string) string {
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return "."
	}
	return p
}

// openBeneathFD is openBeneath on the root's descriptor: openat2 with
// RESOLVE_BENEATH where the kernel has it, else the same walk done here.
func openBeneathFD(root int, rel string, flags int) (int, error) {
	if !forceWalk.Load() && !noOpenat2.Load() {
		fd, err := openat2Beneath(root, rel, flags)
		switch err {
		case nil:
			return fd, nil
		case unix.EXDEV:
			return -1, ErrEscape
		case unix.ENOSYS, unix.E2BIG:
			noOpenat2.Store(true)
		case unix.EPERM, unix.EAGAIN:
			// Maybe a seccomp filter's answer, or renames racing the
			// ".." check: the walk gives the real answer.
			fd, werr := walkBeneath(root, rel, flags)
			if err == unix.EPERM && werr != unix.EPERM {
				noOpenat2.Store(true)
			}
			return fd, werr
		default:
			return -1, err
		}
	}
	return walkBeneath(root, rel, flags)
}

// walkBeneath resolves rel from the root one component at a time, as
// openat2 with RESOLVE_BENEATH does: every component is opened with
// O_NOFOLLOW relative to the directory before it, a symlink is read with
// readlinkat and its target walked in its place, and ".." pops back to the
// directory the walk came from. An absolute target, or a ".." at the root,
// is ErrEscape. The last component is opened with flags.
func walkBeneath(root int, rel string, flags int) (int, error) {
	stack := []int{root} // the directories walked through; the root is not ours
	defer func() {
		for _, fd := range stack[1:] {
			unix.Close(fd)
		}
	}()
	parts := strings.Split(rel, "/")
	links := 0
	for len(parts) > 0 {
		name := parts[0]
		parts = parts[1:]
		dir := stack[len(stack)-1]
		switch name {
		case "", ".":
			continue
		case "..":
			if len(stack) == 1 {
				return -1, ErrEscape
			}
			unix.Close(dir)
			stack = stack[:len(stack)-1]
			continue
		}
		var err error
		if len(parts) == 0 {
			var fd int
			fd, err = retry(func() (int, error) { return unix.Openat(dir, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0) })
			if err == nil {
				if !isLink(fd, flags) {
					return fd, nil
				}
				unix.Close(fd)
				err = unix.ELOOP
			}
		} else {
			var fd int
			fd, err = retry(func() (int, error) {
				return unix.Openat(dir, name, unix.O_RDONLY|oSearch|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			})
			if err == nil {
				stack = append(stack, fd)
				continue
			}
		}
		if err != unix.ELOOP && err != unix.ENOTDIR {
			return -1, err
		}
		// O_NOFOLLOW met a symlink, or the name is no directory.
		t, lerr := readlinkat(dir, name)
		if lerr != nil {
			return -1, err
		}
		if links++; links > maxLinks {
			return -1, unix.ELOOP
		}
		if path.IsAbs(t) {
			return -1, ErrEscape
		}
		parts = append(strings.Split(t, "/"), parts...)
	}
	// The path ended on a directory: "", ".", "..", or a trailing slash.
	fd, err := retry(func() (int, error) { return unix.Openat(stack[len(stack)-1], ".", flags|unix.O_CLOEXEC, 0) })
	if err != nil {
		return -1, err
	}
	return fd, nil
}

// isLink reports whether fd, opened with O_NOFOLLOW and flags, is a symlink
// itself: only an O_PATH open succeeds on one.
func isLink(fd, flags int) bool {
	if oSearch == 0 || flags&oSearch == 0 {
		return false
	}
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// readlinkat reads the target of the symlink name in directory dir.
func readlinkat(dir int, name string) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		got, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if got < n || n >= 1<<16 {
			return string(buf[:got]), nil
		}
	}
}

// openSnap opens the regular file at p under a snapshot root, without
// blocking, refusing anything else with ErrNotRegular; the descriptor is
// left in blocking mode.
func (r Root) openSnap(p string) (*os.File, error) {
	fd, err := r.openBeneath("open", p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, err
	}
	return regularFile(fd, r.Path(p))
}

// readIntoSnap reads the regular file at p under a snapshot root into buf.
func (r Root) readIntoSnap(p string, buf []byte, max int) ([]byte, error) {
	fd, err := r.openBeneath("open", p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
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
