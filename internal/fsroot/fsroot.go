// Package fsroot reads kernel files (sysfs, procfs) under a root directory:
// "/" for the live host, or the directory of an unpacked snapshot. Paths are
// absolute as the kernel lays them out ("/sys/class/net/eth0/mtu"); the root
// is prepended. In a snapshot every read is opened relative to the root's
// directory with openat2(RESOLVE_BENEATH) (or, without it, a walk of
// openat(O_NOFOLLOW) and readlinkat that does the same): symlinks are
// followed only while they stay beneath the root, and the check and the open
// are one step. Only regular files are read: a FIFO, socket or device in a
// snapshot is refused (ErrNotRegular) without blocking. A Root may carry a
// deadline after which every read fails at once (ErrBudget). Every reader of
// host or snapshot files goes through a Root; OpenFile is the one way to a
// host file named by the caller outside any root.
//
// Errors wrap the underlying *fs.PathError, so errors.Is(err, fs.ErrNotExist)
// and errors.Is(err, fs.ErrPermission) work. ErrEscape, ErrNotRegular,
// ErrTooLarge and ErrBudget name the refusals; the first two also match
// fs.ErrPermission, the last context.DeadlineExceeded.
package fsroot

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nicdiag/nicdiag/internal/text"
)

// ErrEscape is returned when a symlink inside a root points outside it.
// errors.Is(err, fs.ErrPermission) also holds for it: the read is refused.
var ErrEscape error = refusal("symlink escapes the root")

// refusal is a read the root refuses by rule rather than one the system
// failed; it matches fs.ErrPermission, so callers outside this internal
// package can tell it without naming it.
type refusal string

func (e refusal) Error() string      { return string(e) }
func (refusal) Is(target error) bool { return target == fs.ErrPermission }

// maxFile bounds one ReadFile: sysfs attributes are one page; /proc files on
// large hosts reach a few MiB. Anything larger is refused, not truncated.
const maxFile = 64 << 20

// Root is a directory that stands for "/". The zero value is the live host.
type Root struct {
	dir      string    // "" or "/" means the live host
	h        *handle   // a snapshot's directory, opened on first use
	deadline time.Time // zero: no time budget (WithDeadline)
}

// New returns a Root for dir; "" and "/" are the live host. A snapshot's
// directory is opened on the first read and stays open, shared by every
// Root of the same dir (New's earlier results and their copies) while it
// still names that directory, until no such Root is left.
func New(dir string) Root {
	if dir == "" || filepath.Clean(dir) == "/" {
		return Root{}
	}
	dir = filepath.Clean(dir)
	return Root{dir: dir, h: sharedHandle(dir)}
}

// Live reports whether r is the running host rather than a snapshot.
func (r Root) Live() bool { return r.dir == "" }

// Dir returns the root directory ("/" for the live host).
func (r Root) Dir() string {
	if r.dir == "" {
		return "/"
	}
	return r.dir
}

// Path maps a kernel path to a host path under the root.
func (r Root) Path(p string) string {
	if r.dir == "" {
		if strings.HasPrefix(p, "/") {
			return path.Clean(p) // no copy when already clean
		}
		return path.Clean("/" + p)
	}
	return filepath.Join(r.dir, path.Clean("/"+p))
}

// confined maps a kernel path to a host path whose symlinks all resolve
// inside the root, for the systems without openat: the path is checked
// and then opened, not both in one step. The live host needs no check; in a
// snapshot a link that leaves it is ErrEscape.
func (r Root) confined(p string) (string, error) {
	if r.dir == "" {
		return r.Path(p), nil
	}
	real, err := r.Resolve(p, nil)
	if err != nil {
		return "", err
	}
	return r.Path(real), nil
}

// ReadFile reads a whole file (up to 64 MiB), confined and refusing what
// Open refuses.
func (r Root) ReadFile(p string) ([]byte, error) { return r.ReadFileMax(p, maxFile) }

// ReadString reads a one-value attribute file and trims surrounding space.
func (r Root) ReadString(p string) (string, error) {
	b, err := r.ReadFile(p)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// ReadInt reads a decimal or 0x-prefixed hex integer attribute.
func (r Root) ReadInt(p string) (int64, error) {
	s, err := r.ReadString(p)
	if err != nil {
		return 0, err
	}
	return r.parseInt(p, s)
}

// ReadIntInto is ReadInt reading the file into buf's storage (ReadInto's
// way, without an *os.File), for the attributes a sampler reads again at
// every interval. It returns the buffer for the next call.
func (r Root) ReadIntInto(p string, buf []byte) (int64, []byte, error) {
	buf, err := r.ReadInto(p, buf, maxFile)
	if err != nil {
		return 0, buf, err
	}
	b := bytes.TrimSpace(buf)
	if v, ok := plainDecimal(b); ok {
		return v, buf, nil
	}
	v, err := r.parseInt(p, string(b))
	return v, buf, err
}

// parseInt parses the trimmed contents s of the attribute at p as ReadInt
// does: base prefixes (0x, 0o, 0b, a leading 0 for octal) and a sign.
func (r Root) parseInt(p, s string) (int64, error) {
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return 0, &fs.PathError{Op: "parse", Path: r.Path(p), Err: fmt.Errorf("not an integer: %q", text.Clip(s))}
	}
	return v, nil
}

// plainDecimal parses "0" or up to 18 decimal digits without a leading 0:
// the numbers that strconv.ParseInt(s, 0, 64) reads as decimal and that
// fit in an int64.
func plainDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// ReadHex reads a sysfs ID attribute of exactly digits hex digits, with or
// without "0x": the kernel pads each to its width (vendor "0x%04x", class
// "0x%06x", a USB idVendor "%04x"), so one with fewer or more digits is
// damaged ("0x02", a class cut short, would read as a class it is not)
// and is an error.
func (r Root) ReadHex(p string, digits int) (uint32, error) {
	s, err := r.ReadString(p)
	if err != nil {
		return 0, err
	}
	h := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	v, err := strconv.ParseUint(h, 16, 32)
	if err != nil || len(h) != digits {
		return 0, &fs.PathError{Op: "parse", Path: r.Path(p), Err: fmt.Errorf("not a %d-digit hex ID: %q", digits, text.Clip(s))}
	}
	return uint32(v), nil
}

// ReadDir lists the names in a directory, sorted. A FIFO or file in place
// of the directory fails at once (ENOTDIR), never blocks.
func (r Root) ReadDir(p string) ([]string, error) {
	if err := r.spent("open", p); err != nil {
		return nil, err
	}
	names, err := r.readDir(p)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// OpenDir opens the directory at p for a caller that lists it itself (with
// getdents on its descriptor, say), confined as ReadDir is: in a snapshot
// it is opened beneath the root, and anything but a directory fails at once
// with ENOTDIR. The caller closes it.
func (r Root) OpenDir(p string) (*os.File, error) {
	if err := r.spent("open", p); err != nil {
		return nil, err
	}
	return r.openDirFile(p)
}

// Exists reports whether p exists (following symlinks, inside the root).
func (r Root) Exists(p string) bool {
	return r.spent("stat", p) == nil && r.exists(p)
}

// Readlink returns the target of a symlink as stored. In a snapshot the
// link's directory is reached beneath the root.
func (r Root) Readlink(p string) (string, error) {
	if err := r.spent("readlink", p); err != nil {
		return "", err
	}
	return r.readlink(p)
}

// LinkBase returns the last element of a symlink's target, e.g. the driver
// name from ".../driver -> ../../../bus/pci/drivers/igb". In a snapshot a
// target outside the root (absolute, or climbing above it) is ErrEscape:
// it names nothing in the snapshot. The name is as stored; one meant for a
// terminal goes through text.Clean.
func (r Root) LinkBase(p string) (string, error) {
	if err := r.spent("readlink", p); err != nil {
		return "", err
	}
	return r.linkBase(p)
}

// Mode returns the type and permission bits of p itself, as os.Lstat
// does: a final symlink is not followed. In a snapshot the directories
// on the way are followed beneath the root only.
func (r Root) Mode(p string) (fs.FileMode, error) {
	if err := r.spent("lstat", p); err != nil {
		return 0, err
	}
	return r.mode(p)
}

// Realpath resolves every symlink in p inside the root and returns the kernel
// path ("/sys/devices/pci0000:00/..."). A link that climbs above the root, or
// an absolute link in a snapshot, is ErrEscape. Where the kernel has
// openat2 it does the resolving (confined as every read is), else Resolve
// walks the path.
func (r Root) Realpath(p string) (string, error) {
	if err := r.spent("realpath", p); err != nil {
		return "", err
	}
	if real, ok := r.realpathFast(p); ok {
		return real, nil
	}
	return r.Resolve(p, nil)
}

// Resolve is Realpath that calls visit, when not nil, with the kernel path and
// the stored target of every symlink it is about to follow; an error from
// visit stops it.
func (r Root) Resolve(p string, visit func(link, target string) error) (string, error) {
	if err := r.spent("realpath", p); err != nil {
		return "", err
	}
	// Not path.Clean: ".." after a symlink applies to the link's target.
	parts := strings.Split(strings.Trim(p, "/"), "/")
	cur := "/"
	for hops := 0; len(parts) > 0; {
		part := parts[0]
		parts = parts[1:]
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, part)
		fi, err := os.Lstat(r.Path(next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", &fs.PathError{Op: "realpath", Path: p, Err: errors.New("too many symlinks")}
		}
		t, err := os.Readlink(r.Path(next))
		if err != nil {
			return "", err
		}
		if path.IsAbs(t) && r.dir != "" || !path.IsAbs(t) && Escapes(cur, t) {
			return "", &fs.PathError{Op: "realpath", Path: p, Err: ErrEscape}
		}
		if visit != nil {
			if err := visit(next, t); err != nil {
				return "", err
			}
		}
		if path.IsAbs(t) {
			cur = "/"
		}
		parts = append(strings.Split(strings.Trim(t, "/"), "/"), parts...)
	}
	return cur, nil
}

// Escapes reports whether the relative symlink target t, read in directory
// dir (a kernel path), climbs above "/".
func Escapes(dir, t string) bool {
	depth := strings.Count(strings.Trim(dir, "/"), "/") + 1
	if dir == "/" {
		depth = 0
	}
	for _, e := range strings.Split(t, "/") {
		switch e {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}
