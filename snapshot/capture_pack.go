package snapshot

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// Pack writes the directory dir as a gzip-compressed tar stream: entries in
// lexical order, names relative to dir (never a leading "/"), symlinks kept
// as the relative links they are. Anything but directories, regular files
// and symlinks is an error; so is a file that is none by the time it is
// opened (each is opened beneath dir, as a snapshot's files are read).
func Pack(ctx context.Context, w io.Writer, dir string) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	root := fsroot.New(dir)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h := &tar.Header{Name: rel, ModTime: fi.ModTime().Truncate(time.Second), Format: tar.FormatPAX}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if filepath.IsAbs(t) {
				return fmt.Errorf("%w: absolute symlink %s -> %s", ErrUnsafeArchive, rel, t)
			}
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, t, 0o777
			return tw.WriteHeader(h)
		case fi.IsDir():
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, rel+"/", 0o755
			return tw.WriteHeader(h)
		case fi.Mode().IsRegular():
			f, err := root.Open("/" + rel) // beneath dir, its type checked before the open
			if err != nil {
				return err
			}
			defer f.Close()
			h.Typeflag, h.Size, h.Mode = tar.TypeReg, fi.Size(), 0o644
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			_, err = io.CopyN(tw, f, fi.Size())
			return err
		}
		return fmt.Errorf("%w: %s is not a file, directory or symlink", ErrUnsafeArchive, rel)
	})
	if err != nil {
		return fmt.Errorf("snapshot: packing %s: %w", dir, err)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// CaptureArchive captures (see Capture) into a temporary directory and
// writes it to w as a .tar.gz.
func CaptureArchive(ctx context.Context, w io.Writer, opts ...CaptureOption) (*Manifest, error) {
	dir, err := os.MkdirTemp("", "nicdiag-capture-")
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer os.RemoveAll(dir)
	m, err := Capture(ctx, dir, opts...)
	if err != nil {
		return nil, err
	}
	if err := Pack(ctx, w, dir); err != nil {
		return nil, err
	}
	return m, nil
}
