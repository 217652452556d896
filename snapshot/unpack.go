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
// a ".." element, a path or symlink target too deep or too long, a symlink
// that leaves the snapshot, an entry under a symlink, or an entry type that
// a snapshot never holds (hard links, devices, FIFOs, sparse files).
var ErrUnsafeArchive = errors.New("snapshot: unsafe archive entry")

// maxDepth and maxPathBytes bound an entry name and a symlink target. The
// deepest path of a real snapshot here is 17 elements and 164 bytes (a USB
// NIC's queue under a PCIe host controller); sysfs paths stay far below
// PATH_MAX. Capture keeps to them too, so that what it writes opens.
const (
	maxDepth     = 64
	maxPathBytes = 1024
)

// entryBlock is what MaxBytes charges each entry and each directory an
// entry implies, besides the stream: what a directory or a small file
// takes on disk (a block of ext4 or xfs, a page of tmpfs), and a measure
// of the time an inode costs to make and remove. The tar stream holds 512
// bytes for a header and nothing for an implied directory: uncharged,
// 3,000 entries of 62 nested directories (a 23 KB archive) took 690 MB
// of disk and 84 s, 199,000 empty files (1.4 MB) 32 s.
const entryBlock = 4096

// entryHook, when not nil, is called with each archive entry (tests).
var entryHook func(*tar.Header)

// mkdir makes a directory of the unpacked tree (a variable for tests).
var mkdir = os.Mkdir

// Unpack extracts a gzip-compressed tar stream into dir (empty or absent),
// refusing entries that would land or point outside dir (ErrUnsafeArchive)
// and stopping at the caps of Limits (ErrLimit; WithLimits sets them),
// counted on what is read and written rather than on what headers claim.
// It reads the stream once, so what it wrote before a refusal stays in dir;
// Open checks a file first and removes its directory on every error.
func Unpack(ctx context.Context, r io.Reader, dir string, opts ...OpenOption) error {
	o := openOpts(opts)
	if err := emptyDir(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return newUnpacker(ctx, dir, o.limits).run(r)
}

// emptyDir refuses a dir that exists and holds anything: Unpack trusts
// that every symlink in it is one it made.
func emptyDir(dir string) error {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if len(names) > 0 {
		return fmt.Errorf("unpacking into %s: not empty", dir)
	}
	if err != nil && err != io.EOF {
		return err
	}
	return nil
}

// unpacker extracts one archive into dir, or with dir "" only checks and
// counts it, writing nothing.
type unpacker struct {
	ctx     context.Context
	dir     string
	lim     Limits
	links   *pathSet // the symlinks made so far
	dirs    *pathSet // the directories made so far, explicit or implied
	entries int
	stream  *meter // the decompressed tar stream
	cur     string // the entry being unpacked
}

func newUnpacker(ctx context.Context, dir string, lim Limits) *unpacker {
	return &unpacker{ctx: ctx, dir: dir, lim: lim.orDefault(), links: newPathSet(), dirs: newPathSet()}
}

// meter counts the decompressed stream that the tar reader consumes,
// headers and padding included, refuses it once it and the entries'
// blocks go past MaxBytes (a chain of PAX headers is read inside one
// tar.Reader.Next), and notices a cancelled context between reads.
type meter struct {
	u *unpacker
	r io.Reader
	n int64
}

func (m *meter) Read(p []byte) (int, error) {
	if err := m.u.ctx.Err(); err != nil {
		return 0, err
	}
	max := m.u.lim.MaxBytes
	left := max - m.n - m.u.blocks()
	if left <= 0 {
		// One byte more tells a stream of exactly max bytes from a longer one.
		var one [1]byte
		n, err := m.r.Read(one[:])
		if n > 0 {
			return 0, m.u.limit("MaxBytes", max, "the decompressed archive and its entries' blocks", m.n+1)
		}
		return 0, err
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := m.r.Read(p)
	m.n += int64(n)
	return n, err
}

func (u *unpacker) limit(name string, max int64, what string, bytes int64) error {
	return &LimitError{Limit: name, Max: max, Name: u.cur, Entries: u.entries, Bytes: bytes, what: what}
}

// run reads the .tar.gz from r, entry by entry (unpacking it when the
// unpacker has a directory); once ctx is cancelled its error is the answer.
func (u *unpacker) run(r io.Reader) error {
	err := u.read(r)
	if err != nil && u.ctx.Err() != nil {
		return u.ctx.Err() // a read cut short by the cancel, not a bad archive
	}
	return err
}

func (u *unpacker) read(r io.Reader) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("not a gzip archive: %w", err)
	}
	defer zr.Close()
	u.stream = &meter{u: u, r: zr}
	tr := tar.NewReader(u.stream)
	for {
		if err := u.ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading archive: %w", err)
		}
		if entryHook != nil {
			entryHook(h)
		}
		if err := u.entry(tr, h); err != nil {
			return err
		}
	}
}

// count counts one more entry or implied directory, and charges it a
// block against MaxBytes.
func (u *unpacker) count() error {
	if u.entries >= u.lim.MaxEntries {
		return u.limit("MaxEntries", int64(u.lim.MaxEntries), "files, directories and symlinks", u.stream.n)
	}
	if u.stream.n+u.blocks()+entryBlock > u.lim.MaxBytes {
		return u.limit("MaxBytes", u.lim.MaxBytes, fmt.Sprintf("the decompressed archive and its entries' blocks (%d bytes each)", entryBlock), u.stream.n)
	}
	u.entries++
	return nil
}

func (u *unpacker) entry(tr *tar.Reader, h *tar.Header) error {
	u.cur = h.Name
	if err := u.count(); err != nil {
		return err
	}
	name, err := cleanName(h.Name)
	if err != nil {
		return err
	}
	if name == "" {
		return nil
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			// Its holes would be written out as zeros: a small entry that
			// expands without end.
			return fmt.Errorf("%w: %q is a sparse file", ErrUnsafeArchive, h.Name)
		}
	}
	if err := u.parents(name); err != nil {
		return err
	}
	dst := ""
	if u.dir != "" {
		dst = filepath.Join(u.dir, filepath.FromSlash(name))
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if u.dirs.has(name) {
			return nil // made already, as a parent or by an earlier entry
		}
		return u.mkdir(name)
	case tar.TypeReg:
		return u.file(tr, h, dst)
	case tar.TypeSymlink:
		if err := checkLink(name, h.Linkname); err != nil {
			return err
		}
		u.links.add(name)
		if dst != "" {
			return os.Symlink(h.Linkname, dst)
		}
	default:
		return fmt.Errorf("%w: %q has type %q", ErrUnsafeArchive, h.Name, string(h.Typeflag))
	}
	return nil
}

// parents refuses an entry under a symlink unpacked before (writing
// through it could land outside dir, or elsewhere than it reads), and
// counts and makes the parent directories it implies that are not made
// yet, outermost first. Which are made is known in memory: each
// directory costs one mkdir, however many entries lie below it.
func (u *unpacker) parents(name string) error {
	if len(u.links.m) > 0 {
		for i := 0; i < len(name); i++ {
			if name[i] == '/' && u.links.has(name[:i]) {
				return fmt.Errorf("%w: %q goes through the symlink %q", ErrUnsafeArchive, name, name[:i])
			}
		}
	}
	var ends [maxDepth]int // where each parent not made yet ends, innermost first
	n := 0
	for i := lastSlash(name); i > 0 && !u.dirs.has(name[:i]); i = lastSlash(name[:i]) {
		ends[n] = i
		n++
	}
	for k := n - 1; k >= 0; k-- {
		if err := u.count(); err != nil {
			return err
		}
		if err := u.mkdir(name[:ends[k]]); err != nil {
			return err
		}
	}
	return nil
}

// mkdir records the directory p (relative, its parents made, counted)
// and makes it when the unpacker writes.
func (u *unpacker) mkdir(p string) error {
	u.dirs.add(p)
	if u.dir == "" {
		return nil
	}
	return mkdir(filepath.Join(u.dir, filepath.FromSlash(p)), 0o755)
}

// file writes a regular file's data to dst (or, with dst "", reads and
// counts it): at most MaxFileBytes, and no further than MaxBytes of the
// stream, counting what arrives whatever the header said.
func (u *unpacker) file(tr io.Reader, h *tar.Header, dst string) error {
	fileMax, left := u.lim.MaxFileBytes, u.lim.MaxBytes-u.stream.n-u.blocks()
	if h.Size > fileMax {
		return u.limit("MaxFileBytes", fileMax, fmt.Sprintf("a file of %d bytes", h.Size), u.stream.n)
	}
	if h.Size > left {
		return u.limit("MaxBytes", u.lim.MaxBytes, fmt.Sprintf("a file of %d bytes takes the decompressed archive", h.Size), u.stream.n)
	}
	var f *os.File
	w := io.Discard
	if dst != "" {
		var err error
		if f, err = os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
			return err
		}
		w = f
	}
	err := u.copyData(w, tr, fileMax)
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// copyData copies at most max bytes of the entry to w and refuses an entry
// that holds more. The stream's meter stops it at MaxBytes.
func (u *unpacker) copyData(w io.Writer, tr io.Reader, max int64) error {
	n, err := io.Copy(w, io.LimitReader(tr, max))
	if err != nil || n < max {
		return err
	}
	var one [1]byte
	if k, _ := tr.Read(one[:]); k > 0 {
		return u.limit("MaxFileBytes", max, "a file", u.stream.n)
	}
	return nil
}

// cleanName validates an entry name and returns it relative to the root.
func cleanName(n string) (string, error) {
	if strings.HasPrefix(n, "/") || strings.Contains(n, "\\") || strings.ContainsRune(n, 0) {
		return "", fmt.Errorf("%w: path %.200q", ErrUnsafeArchive, n)
	}
	if err := checkPathSize("a path", n); err != nil {
		return "", err
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

// checkPathSize refuses a path or link target over maxPathBytes or
// deeper than maxDepth elements.
func checkPathSize(what, p string) error {
	if len(p) > maxPathBytes {
		return fmt.Errorf("%w: %s of %d bytes (at most %d)", ErrUnsafeArchive, what, len(p), maxPathBytes)
	}
	if d := strings.Count(strings.Trim(p, "/"), "/") + 1; d > maxDepth {
		return fmt.Errorf("%w: %s %d elements deep (at most %d)", ErrUnsafeArchive, what, d, maxDepth)
	}
	return nil
}

// checkLink refuses absolute symlinks, relative ones that climb above the
// snapshot root from where they sit, ones too long or too deep, and ones
// with a ".." after a name: only the kernel's own form
// ("../../devices/...") is accepted, since "d/../.." through another link
// could resolve elsewhere than it reads.
func checkLink(name, target string) error {
	if target == "" || path.IsAbs(target) || strings.ContainsRune(target, 0) {
		return fmt.Errorf("%w: symlink %q -> %.200q", ErrUnsafeArchive, name, target)
	}
	if err := checkPathSize("a symlink target", target); err != nil {
		return err
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

// blocks is the entryBlock each entry counted so far charges to MaxBytes.
func (u *unpacker) blocks() int64 { return int64(u.entries) * entryBlock }
