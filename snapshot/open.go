// Package snapshot reads and writes nicdiag snapshots: a directory, or a
// .tar.gz of one, holding subsets of a host's /sys and /proc trees (paths and
// symlinks exactly as the kernel lays them out) and the answers ethtool gave,
// in ethtool/IFACE.json. Every nicdiag package reads a snapshot through the
// same code as the live host, with the snapshot directory as its root.
//
// Opening an archive and capturing from a snapshot directory are bounded
// (Limits): an input that would go past a cap is refused with ErrLimit.
package snapshot

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// OpenOption configures Open and Unpack.
type OpenOption func(*openOptions)

type openOptions struct {
	limits  Limits
	tempDir string
}

func openOpts(opts []OpenOption) openOptions {
	var o openOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// WithLimits sets the caps on what an archive may hold (default
// DefaultLimits; a zero field keeps its default).
func WithLimits(l Limits) OpenOption {
	return func(o *openOptions) { o.limits = l }
}

// WithTempDir sets the directory Open unpacks an archive under (default
// os.TempDir).
func WithTempDir(dir string) OpenOption {
	return func(o *openOptions) { o.tempDir = dir }
}

// Snapshot is an opened snapshot: a directory to use as the root.
type Snapshot struct {
	// Dir is the directory that stands for "/".
	Dir     string
	cleanup string // the directory an archive was unpacked into
	once    sync.Once
	err     error
}

// Close removes the directory that Open unpacked an archive into. It does
// nothing for a snapshot that was a directory already. It may be called
// more than once, and from several goroutines at once (a signal handler's
// among them): the first call removes, every call returns its result once
// the removal is over.
func (s *Snapshot) Close() error {
	if s == nil {
		return nil
	}
	s.once.Do(func() {
		if s.cleanup != "" {
			s.err = os.RemoveAll(s.cleanup)
		}
	})
	return s.err
}

// Open opens a snapshot directory, or unpacks a .tar.gz (or .tgz) into a new
// temporary directory. The caller must Close it.
//
// An archive that is a regular file is read twice: first only checked and
// counted, so that one over a cap of Limits (ErrLimit) or with an unsafe
// entry (ErrUnsafeArchive) is refused before anything reaches the disk;
// then unpacked, checked again. On any error, a cancelled ctx or a panic,
// the temporary directory is removed before Open returns.
func Open(ctx context.Context, p string, opts ...OpenOption) (*Snapshot, error) {
	o := openOpts(opts)
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if fi.IsDir() {
		return &Snapshot{Dir: p}, nil
	}
	f, stop, err := openStream(ctx, p, fi)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	defer stop()
	if fi.Mode().IsRegular() {
		if err := newUnpacker(ctx, "", o.limits).run(f); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", p, err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
	}
	dir, err := os.MkdirTemp(o.tempDir, "nicdiag-snapshot-")
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	kept := false
	defer func() {
		if !kept {
			os.RemoveAll(dir)
		}
	}()
	if err := newUnpacker(ctx, dir, o.limits).run(f); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", p, err)
	}
	kept = true
	return &Snapshot{Dir: topLevel(dir), cleanup: dir}, nil
}

// openStream opens the archive at p. A FIFO's open waits for a writer and
// a pipe's reads for data: for those, a cancelled ctx ends the wait (the
// open is left to finish on its own goroutine, which closes what it gets)
// and any read after it until stop is called.
func openStream(ctx context.Context, p string, fi os.FileInfo) (_ *os.File, stop func() bool, _ error) {
	none := func() bool { return false }
	if fi.Mode().IsRegular() {
		f, err := os.Open(p)
		return f, none, err
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(p)
		ch <- opened{f, err}
	}()
	var o opened
	select {
	case o = <-ch:
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, none, ctx.Err()
	}
	if o.err != nil {
		return nil, none, o.err
	}
	// os.Open puts a pipe or FIFO in the runtime's poller: a read deadline
	// in the past wakes a read blocked on it.
	return o.f, context.AfterFunc(ctx, func() { o.f.SetReadDeadline(time.Unix(1, 0)) }), nil
}

// topLevel returns the one directory an archive holds when it was packed
// from above the snapshot (tar czf x.tar.gz host/), else dir itself.
func topLevel(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !entries[0].IsDir() {
		return dir
	}
	switch name := entries[0].Name(); name {
	case "sys", "proc", "ethtool", "netlink":
		return dir // a snapshot holding only one of its trees
	default:
		return filepath.Join(dir, name)
	}
}
