package fsroot

import (
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// oSearch opens a directory only to resolve names under it (or a file only
// to know it is there): no read permission needed, and a FIFO or device is
// never opened for real.
const oSearch = unix.O_PATH

// openat2Beneath opens rel under the directory root with RESOLVE_BENEATH:
// the kernel resolves it, symlinks included, and fails with EXDEV rather
// than leave root (a ".." above it, an absolute symlink, a relative one
// that climbs out). Magic links (/proc/PID/fd/N in a snapshot) are
// refused too.
func openat2Beneath(root int, rel string, flags int) (int, error) {
	return openat2(root, rel, flags, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_MAGICLINKS)
}

// openat2 is unix.Openat2, retried when interrupted.
func openat2(dir int, name string, flags int, resolve uint64) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolve}
	return retry(func() (int, error) { return unix.Openat2(dir, name, &how) })
}

// reopen opens what the O_PATH descriptor fd stands for with flags (plus
// O_CLOEXEC), through its magic link in /proc/self/fd.
func reopen(fd, flags int) (int, error) {
	return retry(func() (int, error) { return unix.Open("/proc/self/fd/"+strconv.Itoa(fd), flags|unix.O_CLOEXEC, 0) })
}

// fdPath returns the path the kernel has for an open descriptor, from
// /proc/self/fd; ok is false when /proc cannot say.
func fdPath(fd int) (string, bool) {
	var buf [4096]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || n == 0 || n == len(buf) || buf[0] != '/' {
		return "", false
	}
	return string(buf[:n]), true
}

// dirNames reads the names in the open directory fd, "." and ".." left
// out, and closes fd. The caller names the directory in an error.
func dirNames(fd int) ([]string, error) {
	defer unix.Close(fd)
	var buf [8192]byte
	var names []string
	for {
		n, err := unix.Getdents(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// realpathFast is Realpath done by the kernel: p opened with O_PATH (beneath
// the root in a snapshot) and its path read back (fdKernelPath). Three
// system calls instead of one lstat per component. ok is false when it
// cannot answer (an error on the way, no openat2, no /proc): Resolve's walk
// then gives the answer and the error.
func (r Root) realpathFast(p string) (real string, ok bool) {
	if forceWalk.Load() || noOpenat2.Load() || strings.IndexByte(p, 0) >= 0 {
		return "", false
	}
	var fd int
	var err error
	if r.dir == "" {
		fd, err = openat2(unix.AT_FDCWD, "/"+p, unix.O_PATH, unix.RESOLVE_NO_MAGICLINKS)
	} else {
		dfd, h, derr := r.dirfd()
		if derr != nil {
			return "", false
		}
		fd, err = openat2Beneath(dfd, rel(p), unix.O_PATH)
		runtime.KeepAlive(h)
	}
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	return r.fdKernelPath(fd)
}
