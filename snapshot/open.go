// Package snapshot reads and writes nicdiag snapshots: a directory, or a
// .tar.gz of one, holding subsets of a host's /sys and /proc trees (paths and
// symlinks exactly as the kernel lays them out) and the answers ethtool gave,
// in ethtool/IFACE.json. Every nicdiag package reads a snapshot through the
// same code as the live host, with the snapshot directory as its root.
package snapshot

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// ErrUnsafeArchive is returned for an archive entry with an absolute path,
// a ".." element, a symlink that leaves the snapshot, or an entry type that a
// snapshot never holds.
var ErrUnsafeArchive = errors.New("snapshot: unsafe archive entry")

// Limits on what Unpack accepts, so a hostile archive can fill neither the
// disk nor the CPU (each entry's parents are checked one by one: depth
// times entries).
const (
	maxEntries    = 200000
	maxTotalBytes = 512 << 20
	// maxDepth and maxPathBytes bound an entry name. The deepest path of a
	// real snapshot here is 17 elements and 164 bytes (a USB NIC's queue
	// under a PCIe host controller); sysfs paths stay far below PATH_MAX.
	maxDepth     = 64
	maxPathBytes = 1024
)

// Snapshot is an opened snapshot: a directory to use as the root.
type Snapshot struct {
	// Dir is the directory that stands for "/".
	Dir     string
	cleanup string
}

// Close removes the directory that Open unpacked an archive into. It does
// nothing for a snapshot that was a directory already.
func (s *Snapshot) Close() error {
	if s == nil || s.cleanup == "" {
		return nil
	}
	err := os.RemoveAll(s.cleanup)
	s.cleanup = ""
	return err
}

// Open opens a snapshot directory, or unpacks a .tar.gz (or .tgz) into a new
// temporary directory. The caller must Close it.
func Open(ctx context.Context, p string) (*Snapshot, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if fi.IsDir() {
		return &Snapshot{Dir: p}, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	dir, err := os.MkdirTemp("", "nicdiag-snapshot-")
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := Unpack(ctx, f, dir); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("snapshot %s: %w", p, err)
	}
	return &Snapshot{Dir: topLevel(dir), cleanup: dir}, nil
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

// Unpack extracts a gzip-compressed tar stream into dir, refusing entries
// that would land or point outside dir.
func Unpack(ctx context.Context, r io.Reader, dir string) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("not a gzip archive: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var total int64
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading archive: %w", err)
		}
		if n >= maxEntries {
			return fmt.Errorf("archive has more than %d entries", maxEntries)
		}
		name, err := cleanName(h.Name)
		if err != nil {
			return err
		}
		if name == "" {
			continue
		}
		if err := realParents(dir, name); err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			total += h.Size
			if h.Size < 0 || total > maxTotalBytes {
				return fmt.Errorf("archive unpacks to more than %d bytes", maxTotalBytes)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := writeFile(dst, tr, h.Size); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := checkLink(name, h.Linkname); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, dst); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: %q has type %q", ErrUnsafeArchive, h.Name, string(h.Typeflag))
		}
	}
}

// cleanName validates an entry name and returns it relative to the root.
func cleanName(n string) (string, error) {
	if strings.HasPrefix(n, "/") || strings.Contains(n, "\\") || strings.ContainsRune(n, 0) {
		return "", fmt.Errorf("%w: path %q", ErrUnsafeArchive, n)
	}
	if len(n) > maxPathBytes {
		return "", fmt.Errorf("%w: a path of %d bytes (at most %d)", ErrUnsafeArchive, len(n), maxPathBytes)
	}
	if d := strings.Count(strings.Trim(n, "/"), "/") + 1; d > maxDepth {
		return "", fmt.Errorf("%w: a path %d elements deep (at most %d)", ErrUnsafeArchive, d, maxDepth)
	}
	for _, e := range strings.Split(n, "/") {
		if e == ".." {
			return "", fmt.Errorf("%w: path %q", ErrUnsafeArchive, n)
		}
	}
	c := path.Clean(n)
	if c == "." {
		return "", nil
	}
	return c, nil
}

// checkLink refuses absolute symlinks, relative ones that climb above the
// snapshot root from where they sit, and ones with a ".." after a name: only
// the kernel's own form ("../../devices/...") is accepted, since "d/../.."
// through another link could resolve elsewhere than it reads.
func checkLink(name, target string) error {
	if target == "" || path.IsAbs(target) || strings.ContainsRune(target, 0) {
		return fmt.Errorf("%w: symlink %q -> %q", ErrUnsafeArchive, name, target)
	}
	named := false
	for _, e := range strings.Split(target, "/") {
		switch e {
		case "", ".":
		case "..":
			if named {
				return fmt.Errorf("%w: symlink %q -> %q climbs after descending", ErrUnsafeArchive, name, target)
			}
		default:
			named = true
		}
	}
	if fsroot.Escapes(path.Dir("/"+name), target) {
		return fmt.Errorf("%w: symlink %q -> %q leaves the snapshot", ErrUnsafeArchive, name, target)
	}
	return nil
}

// realParents refuses an entry whose parent directories include a symlink
// already unpacked: writing through it could land outside dir.
func realParents(dir, name string) error {
	cur := dir
	elems := strings.Split(name, "/")
	for _, e := range elems[:len(elems)-1] {
		cur = filepath.Join(cur, e)
		fi, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%w: %q goes through %q, which is not a directory", ErrUnsafeArchive, name, e)
		}
	}
	return nil
}

func writeFile(dst string, r io.Reader, size int64) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, io.LimitReader(r, size))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
