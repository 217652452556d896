//go:build unix

package fsroot

import (
	"io/fs"
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
