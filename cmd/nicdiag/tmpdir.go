package main

// The private TMPDIR: one directory per nicdiag process, locked while the
// process lives, so that what a killed or hurried process leaves behind
// is found and removed by the next.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Private TMPDIRs are named tempLive + random once locked; tempNew +
// random is the same directory in the moment between its mkdir and its
// lock.
const (
	tempNew  = "nicdiag-new-"
	tempLive = "nicdiag-run-"
)

// newAge is how old an unlocked tempNew directory must be to be stale:
// its maker locks it microseconds after making it, unless it died.
const newAge = time.Minute

// removeAll removes a private TMPDIR (a variable for tests).
var removeAll = os.RemoveAll

// privateTemp is the process's private TMPDIR and the descriptor that
// holds its lock.
type privateTemp struct {
	dir  string
	lock *os.File // an exclusive flock(2), released when the process ends
}

// makePrivateTemp makes a private TMPDIR under os.TempDir. It holds an
// exclusive flock on the directory for as long as the process lives (the
// descriptor is close-on-exec, so no command nicdiag runs inherits it):
// a later nicdiag that gets the lock knows the maker is gone, whichever
// pid namespace it ran in. The directory is made under tempNew and
// renamed to tempLive once locked, so that no sweep finds it unlocked.
func makePrivateTemp() (*privateTemp, error) {
	dir, err := os.MkdirTemp("", tempNew)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(dir)
	if err == nil {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		os.Remove(dir)
		return nil, err
	}
	live := filepath.Join(filepath.Dir(dir), tempLive+strings.TrimPrefix(filepath.Base(dir), tempNew))
	if unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, live, unix.RENAME_NOREPLACE) == nil {
		dir = live
	}
	return &privateTemp{dir: dir, lock: f}, nil
}

// dirName is the directory, "" for none.
func (t *privateTemp) dirName() string {
	if t == nil {
		return ""
	}
	return t.dir
}

// remove removes the directory and then drops the lock; the lock is kept
// when the removal fails, so that the next sweep tries only after this
// process has gone.
func (t *privateTemp) remove() {
	if t == nil {
		return
	}
	if removeAll(t.dir) == nil && t.lock != nil {
		t.lock.Close()
	}
}

// sweepStale removes the private TMPDIRs under parent, other than self,
// whose lock is free: their processes ended without removing them (a
// SIGKILL, or a removal at exit cut short). Only directories owned by this
// user are looked at. It may take long (a tree of thousands of entries);
// runProcess runs it on a goroutine that ends with the process, and what
// is left the next sweep finds again.
func sweepStale(parent, self string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, ent := range ents {
		name := ent.Name()
		if !ent.IsDir() || !(strings.HasPrefix(name, tempLive) || strings.HasPrefix(name, tempNew)) {
			continue
		}
		if p := filepath.Join(parent, name); p != self {
			removeIfStale(p, strings.HasPrefix(name, tempNew))
		}
	}
}

// removeIfStale removes the private TMPDIR at p if this user owns it and
// its lock can be taken (and, for one still named tempNew, it is older
// than newAge). The lock is held during the removal, so that two sweeps
// do not both remove it.
func removeIfStale(p string, isNew bool) bool {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || int(st.Uid) != os.Geteuid() {
		return false
	}
	if isNew && time.Since(time.Unix(st.Ctim.Unix())) < newAge {
		return false
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false // held: its process is alive
	}
	err = os.RemoveAll(p)
	return err == nil || errors.Is(err, os.ErrNotExist)
}
