package snapshot

// The copier: what Capture writes, within Limits, and how it reads a
// source confined to it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// copier copies kernel paths from src to dst, recreating every symlink it
// meets as the same relative link. It reads src through root: confined, and
// never blocking on a FIFO.
type copier struct {
	ctx      context.Context // cancelling it stops the copy at the next file
	src, dst string
	root     fsroot.Root
	lim      Limits
	done     map[string]bool
	skipped  []string
	unlisted int   // skips past maxSkipped
	fatal    error // a write error in dst, or a cap of lim reached
	entries  int   // files, symlinks and directories written
	bytes    int64 // file bytes written
	dirs     *pathSet
	listed   int // directory names listed
}

// maxSkipped bounds the manifest's Skipped list.
const maxSkipped = 10000

// listPerEntry bounds the directory names a capture lists, per entry of
// MaxEntries, so that a source of empty directories without end stops too.
// Capturing a live host or a bundled snapshot lists 0.7 to 1 name per entry
// it writes.
const listPerEntry = 4

func (c *copier) out(p string) string { return filepath.Join(c.dst, filepath.FromSlash(p)) }

func (c *copier) skip(p string, err error) {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if len(c.skipped) >= maxSkipped {
		c.unlisted++
		return
	}
	c.skipped = append(c.skipped, p+": "+err.Error())
}

func (c *copier) limit(name string, max int64, what, p string) error {
	return &LimitError{Limit: name, Max: max, Name: p, Entries: c.entries, Bytes: c.bytes, what: what}
}

// list returns the names in directory p, sorted; once a cap is reached,
// none.
func (c *copier) list(p string) ([]string, error) {
	if c.fatal == nil {
		c.fatal = c.ctx.Err()
	}
	if c.fatal != nil {
		return nil, c.fatal
	}
	names, err := c.root.ReadDir(p)
	if err != nil {
		return nil, err
	}
	c.listed += len(names)
	if max := int64(c.lim.MaxEntries) * listPerEntry; int64(c.listed) > max {
		c.fatal = c.limit("MaxEntries", int64(c.lim.MaxEntries), fmt.Sprintf("directory names listed (%d per entry)", listPerEntry), p)
		return nil, c.fatal
	}
	return names, nil
}

func (c *copier) isDir(p string) bool {
	m, err := c.root.Mode(p)
	return err == nil && m.IsDir()
}

// resolve returns the kernel path p leads to, copying each symlink on the
// way. Links that link refuses stop it.
func (c *copier) resolve(p string) (string, error) {
	return c.root.Resolve(p, c.link)
}

// count counts the entry at kernel path p and the directories it adds to
// dst, setting c.fatal past MaxEntries.
func (c *copier) count(p string) bool {
	add := func(string) error {
		if c.entries >= c.lim.MaxEntries {
			c.fatal = c.limit("MaxEntries", int64(c.lim.MaxEntries), "files, directories and symlinks", p)
			return c.fatal
		}
		if c.bytes+c.blocks()+entryBlock > c.lim.MaxBytes {
			c.fatal = c.limit("MaxBytes", c.lim.MaxBytes, fmt.Sprintf("the files' bytes and their entries' blocks (%d bytes each)", entryBlock), p)
			return c.fatal
		}
		c.entries++
		return nil
	}
	rel := strings.TrimPrefix(p, "/")
	return add(rel) == nil && c.dirs.newParents(rel, add) == nil
}

// link recreates the symlink p -> t in dst. A link Open would refuse
// (absolute, leaving the root, or too long) is not made: the error says
// why.
func (c *copier) link(p, t string) error {
	if c.done[p] {
		return nil
	}
	if c.fatal != nil {
		return c.fatal
	}
	rel := strings.TrimPrefix(p, "/")
	if err := checkPathSize("a path", rel); err != nil {
		return err
	}
	if err := checkLink(rel, t); err != nil {
		return err
	}
	c.done[p] = true
	if !c.count(p) {
		return c.fatal
	}
	dst := c.out(p)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		c.fatal = err
		return err
	}
	if err := os.Symlink(t, dst); err != nil && !errors.Is(err, fs.ErrExist) {
		c.fatal = err
		return err
	}
	return nil
}

// write writes b to kernel path p in dst, within the caps.
func (c *copier) write(p string, b []byte) {
	if c.fatal != nil {
		return
	}
	if err := checkPathSize("a path", strings.TrimPrefix(p, "/")); err != nil {
		c.skip(p, err)
		return
	}
	if !c.count(p) {
		return
	}
	if int64(len(b)) > c.lim.MaxBytes-c.bytes-c.blocks() {
		c.fatal = c.limit("MaxBytes", c.lim.MaxBytes, "the files' bytes and their entries' blocks", p)
		return
	}
	dst := c.out(p)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		c.fatal = err
		return
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		c.fatal = err
		return
	}
	c.bytes += int64(len(b))
}

// copyFile copies one regular file at kernel path p (already resolved).
func (c *copier) copyFile(p string) { c.copyKept(p, nil) }

// copyKept copies the file at kernel path p as copyFile does, writing
// what keep returns of its content (all of it when keep is nil).
func (c *copier) copyKept(p string, keep func([]byte) []byte) {
	if c.fatal == nil {
		c.fatal = c.ctx.Err()
	}
	if c.done[p] || c.fatal != nil {
		return
	}
	c.done[p] = true
	b, err := c.read(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		c.skip(p, err)
	default:
		if keep != nil {
			b = keep(b)
		}
		c.write(p, b)
	}
}

// read reads the file at kernel path p, confined and never blocking
// (fsroot's Open), refusing one over MaxFileBytes: at once when its size
// says so, else once that much is read (procfs files report size 0).
func (c *copier) read(p string) ([]byte, error) {
	f, err := c.root.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	max := c.lim.MaxFileBytes
	tooLarge := fmt.Errorf("larger than MaxFileBytes (%d bytes)", max)
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, tooLarge
	}
	return b, nil
}

// special are the file types a capture never opens.
const special = fs.ModeNamedPipe | fs.ModeSocket | fs.ModeDevice | fs.ModeCharDevice | fs.ModeIrregular

// copyNames copies the named entries of directory dir: files, and
// symlinks as links.
func (c *copier) copyNames(dir string, names []string) {
	real, err := c.resolve(dir)
	if err != nil {
		return
	}
	for _, n := range names {
		if c.fatal != nil {
			return
		}
		p := path.Join(real, n)
		m, err := c.root.Mode(p) // lstat beneath the root
		if err != nil {
			continue
		}
		switch {
		case m&fs.ModeSymlink != 0:
			if t, err := c.root.Readlink(p); err == nil {
				if err := c.link(p, t); err != nil && err != c.fatal {
					c.skip(p, err)
				}
			}
		case m.IsRegular() && m.Perm()&0o444 != 0:
			c.copyFile(p)
		case m&special != 0:
			c.skip(p, fsroot.ErrNotRegular) // never opened: a FIFO would block
		}
	}
}

// copyTree copies the regular files under dir, depth levels deep.
func (c *copier) copyTree(dir string, depth int) {
	real, err := c.resolve(dir)
	if err != nil {
		return
	}
	names, err := c.list(real)
	if err != nil {
		return
	}
	for _, n := range names {
		if c.fatal != nil {
			return
		}
		p := path.Join(real, n)
		m, err := c.root.Mode(p)
		if err != nil {
			continue
		}
		switch {
		case m.IsDir() && depth > 1:
			c.copyTree(p, depth-1)
		case m.IsRegular() && m.Perm()&0o444 != 0:
			c.copyFile(p)
		case m&special != 0:
			c.skip(p, fsroot.ErrNotRegular) // never opened: a FIFO would block
		}
	}
}

// blocks is the entryBlock each entry counted so far charges to MaxBytes.
func (c *copier) blocks() int64 { return int64(c.entries) * entryBlock }
