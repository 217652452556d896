//go:build !unix

package fsroot

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// handle: without openat, a snapshot root is read by path (see confined).
type handle struct{}

func (h *handle) names(dir string) bool { return true }

func (r Root) open(p string) (*os.File, error) {
	hp, err := r.confined(p)
	if err != nil {
		return nil, err
	}
	return openRegular(hp)
}

func (r Root) readInto(p string, buf []byte, max int) ([]byte, error) {
	hp, err := r.confined(p)
	if err != nil {
		return buf, err
	}
	return readRegularInto(hp, buf, max)
}

func (r Root) readDir(p string) ([]string, error) {
	hp, err := r.confined(p)
	if err != nil {
		return nil, err
	}
	d, err := openDir(hp)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

func (r Root) exists(p string) bool {
	hp, err := r.confined(p)
	if err != nil {
		return false
	}
	_, err = os.Stat(hp)
	return err == nil
}

func (r Root) readlink(p string) (string, error) {
	dir, err := r.confined(path.Dir(path.Clean("/" + p)))
	if err != nil {
		return "", err
	}
	return os.Readlink(filepath.Join(dir, path.Base(p)))
}

func (r Root) realpathFast(p string) (string, bool) { return "", false }

func (r Root) linkBase(p string) (string, error) {
	t, err := r.readlink(p)
	if err != nil {
		return "", err
	}
	if r.dir != "" {
		dir, err := r.Resolve(path.Dir(path.Clean("/"+p)), nil)
		if err != nil {
			return "", err
		}
		if path.IsAbs(t) || Escapes(dir, t) {
			return "", &fs.PathError{Op: "readlink", Path: r.Path(p), Err: ErrEscape}
		}
	}
	return path.Base(t), nil
}

func (r Root) mode(p string) (fs.FileMode, error) {
	dir, err := r.confined(path.Dir(path.Clean("/" + p)))
	if err != nil {
		return 0, err
	}
	fi, err := os.Lstat(filepath.Join(dir, path.Base(p)))
	if err != nil {
		return 0, err
	}
	return fi.Mode(), nil
}

func (r Root) openDirFile(p string) (*os.File, error) {
	hp, err := r.confined(p)
	if err != nil {
		return nil, err
	}
	return openDir(hp)
}
