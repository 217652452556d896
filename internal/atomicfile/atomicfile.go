// Package atomicfile writes a file so that a reader sees the old content or
// the whole new content, never a part: a temporary file in the same
// directory, written, synced to disk and renamed over the path.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes what write writes to path, with permissions perm: into a
// temporary file beside path (named ".BASE.*", so a reader that globs
// *.BASE-EXTENSION does not see it), synced, then renamed over path, and
// the directory synced so the rename survives a crash. On any error path
// is left as it was and the temporary file is removed; the error names
// path.
func Write(path string, perm fs.FileMode, write func(io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the temporary file's name would confuse
		}
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	name := tmp.Name()
	err = fill(tmp, perm, write)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the rename, on file systems that need it; some refuse
		d.Close()
	}
	return nil
}

// fill writes to f through a buffer, sets perm and syncs f.
func fill(f *os.File, perm fs.FileMode, write func(io.Writer) error) error {
	w := bufio.NewWriter(f)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	return f.Sync()
}
