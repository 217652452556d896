//go:build unix && !linux

package fsroot

import (
	"os"

	"golang.org/x/sys/unix"
)

// oSearch is 0 where there is no O_PATH: directories on the way are opened
// for reading.
const oSearch = 0

// openat2Beneath: only Linux has openat2; the walk does its work.
func openat2Beneath(root int, rel string, flags int) (int, error) { return -1, unix.ENOSYS }

// reopen: without O_PATH there is nothing to reopen.
func reopen(fd, flags int) (int, error) { return -1, unix.ENOSYS }

// fdPath: no /proc/self/fd to ask.
func fdPath(fd int) (string, bool) { return "", false }

// dirNames reads the names in the open directory fd and closes it.
func dirNames(fd int) ([]string, error) {
	f := os.NewFile(uintptr(fd), "")
	defer f.Close()
	return f.Readdirnames(-1)
}

// realpathFast: without openat2 and /proc, Resolve's walk answers.
func (r Root) realpathFast(p string) (string, bool) { return "", false }
