package snapshot

import (
	"errors"
	"fmt"
	"hash/maphash"
)

// Limits bounds the work that Open, Unpack and Capture do on an input that
// may be hostile: an archive, or a snapshot directory captured from. A zero
// field takes its value from DefaultLimits.
type Limits struct {
	// MaxEntries bounds the files, directories and symlinks made: an
	// archive's entries plus the parent directories they imply without an
	// entry of their own, or what a capture writes.
	MaxEntries int
	// MaxFileBytes bounds one file. An archive entry over it is refused;
	// a capture skips the file and lists it in the manifest.
	MaxFileBytes int64
	// MaxBytes bounds the bytes in all, each entry charged 4 KiB besides
	// (a block on disk; see entryBlock): of an archive, the decompressed
	// tar stream (headers, padding and the files' data, so also what is
	// written) and the blocks of its entries and of the directories they
	// imply; of a capture, the files it writes and the blocks of what it
	// makes.
	MaxBytes int64
}

// DefaultLimits returns the limits used where none are set: 200,000
// entries, 64 MiB in one file (the most that nicdiag reads of a file) and
// 256 MiB in all, which with its block charged to each entry holds at
// most 65,536 entries. The largest snapshot in testdata/snapshots (a
// dual-socket Xeon with SR-IOV VFs) has 1,856 entries, 59 KB of files
// and a 1.8 MB tar stream, and takes 7.2 MB of disk unpacked: 9 MB of the
// 256 MiB.
func DefaultLimits() Limits {
	return Limits{MaxEntries: 200000, MaxFileBytes: 64 << 20, MaxBytes: 256 << 20}
}

// orDefault fills the zero fields of l from DefaultLimits.
func (l Limits) orDefault() Limits {
	d := DefaultLimits()
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	return l
}

// ErrLimit is matched (errors.Is) by every refusal at a cap of Limits; the
// error is a *LimitError with the detail.
var ErrLimit = errors.New("snapshot: over a limit")

// LimitError is a refusal at a cap of Limits: which one, and how far the
// work got before it stopped.
type LimitError struct {
	// Limit names the field of Limits: "MaxEntries", "MaxFileBytes" or
	// "MaxBytes".
	Limit string
	// Max is the cap.
	Max int64
	// Name is the archive entry or file at which it stopped.
	Name string
	// Entries and Bytes say how far it got: entries counted, and bytes of
	// the decompressed archive read (Open, Unpack) or written (Capture).
	Entries int
	Bytes   int64
	what    string // what went over, for the message
}

func (e *LimitError) Error() string {
	s := fmt.Sprintf("%s over %s (%d): stopped after %d entries and %d bytes", e.what, e.Limit, e.Max, e.Entries, e.Bytes)
	if e.Name != "" {
		s += fmt.Sprintf(", at %.200q", e.Name)
	}
	return s
}

// Is makes errors.Is(err, ErrLimit) hold.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// pathSet holds path hashes: no copy of each name, at 8 bytes a path. A
// collision only makes a path look present.
type pathSet struct {
	seed maphash.Seed
	m    map[uint64]struct{}
}

func newPathSet() *pathSet {
	return &pathSet{seed: maphash.MakeSeed(), m: map[uint64]struct{}{}}
}

func (s *pathSet) has(p string) bool {
	_, ok := s.m[maphash.String(s.seed, p)]
	return ok
}

// add adds p and reports whether it was new.
func (s *pathSet) add(p string) bool {
	h := maphash.String(s.seed, p)
	if _, ok := s.m[h]; ok {
		return false
	}
	s.m[h] = struct{}{}
	return true
}

// newParents calls count for each parent directory of the slash-separated
// relative path p that dirs does not hold yet, deepest first, adding it,
// and stops at the first one held (its own parents were added with it) or
// at an error from count.
func (s *pathSet) newParents(p string, count func(dir string) error) error {
	for i := lastSlash(p); i > 0; i = lastSlash(p[:i]) {
		if !s.add(p[:i]) {
			return nil
		}
		if err := count(p[:i]); err != nil {
			return err
		}
	}
	return nil
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}
