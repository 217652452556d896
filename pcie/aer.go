package pcie

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/text"
)

// ErrBadAER: an AER statistics file (aer_dev_correctable, aer_dev_nonfatal,
// aer_dev_fatal) is not lines of "NAME COUNT".
var ErrBadAER = errors.New("pcie: malformed AER counters")

// AER statistics files in a PCI function's sysfs directory, present where
// the function has the AER capability (Linux 4.19 and later), and the name
// of the line that totals each.
const (
	AERCorrectableFile = "aer_dev_correctable" // total line TOTAL_ERR_COR
	AERNonFatalFile    = "aer_dev_nonfatal"    // total line TOTAL_ERR_NONFATAL
	AERFatalFile       = "aer_dev_fatal"       // total line TOTAL_ERR_FATAL

	AERCorrectableTotal = "TOTAL_ERR_COR"
	AERNonFatalTotal    = "TOTAL_ERR_NONFATAL"
	AERFatalTotal       = "TOTAL_ERR_FATAL"
)

// maxAERLines bounds a file: the kernel writes at most one line per status
// bit (32) and the total.
const maxAERLines = 64

// AERError says which line of an AER statistics file is malformed. It
// matches ErrBadAER.
type AERError struct {
	Line   int    // 1-based; 0 when not about one line
	Reason string // "want NAME COUNT: \"RxErr\""
}

// Error renders "pcie: malformed AER counters: line 3: ...".
func (e *AERError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%v: line %d: %s", ErrBadAER, e.Line, e.Reason)
	}
	return fmt.Sprintf("%v: %s", ErrBadAER, e.Reason)
}

// Unwrap returns ErrBadAER.
func (e *AERError) Unwrap() error { return ErrBadAER }

// ParseAERCounters parses an AER statistics file as the kernel writes it
// (drivers/pci/pcie/aer.c): one "NAME COUNT" line per error type, named
// ("RxErr 0", "BadTLP 3") or, for a status bit without a name that counted,
// "dev_cor_errs_bit[N] COUNT", then the total ("TOTAL_ERR_COR 3"). It
// returns the counts by name. An empty file, a line that is not a name and a
// decimal count, a repeated name or more than 64 lines is an *AERError.
func ParseAERCounters(b []byte) (map[string]uint64, error) {
	out := make(map[string]uint64, 20)
	line := 0
	for len(b) > 0 {
		var l []byte
		l, b, _ = bytes.Cut(b, []byte("\n"))
		line++
		if line > maxAERLines {
			return nil, &AERError{Reason: fmt.Sprintf("more than %d lines", maxAERLines)}
		}
		f := bytes.Fields(l)
		if len(f) == 0 && len(b) == 0 {
			break // the final newline, or trailing space
		}
		if len(f) != 2 {
			return nil, &AERError{Line: line, Reason: fmt.Sprintf("want NAME COUNT: %q", text.Clip(string(l)))}
		}
		v, ok := text.Uint(f[1])
		if !ok {
			return nil, &AERError{Line: line, Reason: fmt.Sprintf("count is not a decimal number: %q", text.Clip(string(f[1])))}
		}
		name := string(f[0])
		if _, dup := out[name]; dup {
			return nil, &AERError{Line: line, Reason: fmt.Sprintf("%q repeated", text.Clip(name))}
		}
		out[name] = v
	}
	if len(out) == 0 {
		return nil, &AERError{Reason: "no counters"}
	}
	return out, nil
}

// AERTotal checks an AER statistics file as ParseAERCounters does, with the
// same errors, and returns the count of its line named total (ok is false
// when there is none), allocating nothing on a well-formed file: for a
// sampler that reads the files at every interval and needs only the total.
func AERTotal(b []byte, total string) (v uint64, ok bool, err error) {
	var names [maxAERLines][]byte
	n, line := 0, 0
	for len(b) > 0 {
		var l []byte
		l, b, _ = bytes.Cut(b, []byte("\n"))
		line++
		if line > maxAERLines {
			return 0, false, &AERError{Reason: fmt.Sprintf("more than %d lines", maxAERLines)}
		}
		// The fields as bytes.Fields splits them (at unicode.IsSpace).
		var f [2][]byte
		nf := 0
		for i := 0; i < len(l); {
			for i < len(l) {
				r, w := utf8.DecodeRune(l[i:])
				if !unicode.IsSpace(r) {
					break
				}
				i += w
			}
			if i == len(l) {
				break
			}
			j := i
			for j < len(l) {
				r, w := utf8.DecodeRune(l[j:])
				if unicode.IsSpace(r) {
					break
				}
				j += w
			}
			if nf < len(f) {
				f[nf] = l[i:j]
			}
			nf++
			i = j
		}
		if nf == 0 && len(b) == 0 {
			break // the final newline, or trailing space
		}
		if nf != 2 {
			return 0, false, &AERError{Line: line, Reason: fmt.Sprintf("want NAME COUNT: %q", text.Clip(string(l)))}
		}
		c, isDec := text.Uint(f[1])
		if !isDec {
			return 0, false, &AERError{Line: line, Reason: fmt.Sprintf("count is not a decimal number: %q", text.Clip(string(f[1])))}
		}
		for _, m := range names[:n] {
			if bytes.Equal(m, f[0]) {
				return 0, false, &AERError{Line: line, Reason: fmt.Sprintf("%q repeated", text.Clip(string(f[0])))}
			}
		}
		names[n] = f[0]
		n++
		if string(f[0]) == total {
			v, ok = c, true
		}
	}
	if n == 0 {
		return 0, false, &AERError{Reason: "no counters"}
	}
	return v, ok, nil
}

// AER is what a function's AER statistics files counted since boot (or
// since the function was added): each file's total line, and the error
// types that counted. It is read for every end of a walked path that has
// the files (Linux 4.19 and later, a function with the AER capability).
type AER struct {
	// Correctable, NonFatal and Fatal are the TOTAL_ERR_* lines; a file
	// that is absent or unreadable leaves its total 0 and is named in Note.
	Correctable uint64 `json:"correctable"`
	NonFatal    uint64 `json:"nonfatal"`
	Fatal       uint64 `json:"fatal"`
	// Types are the error types with a count above 0, by the kernel's
	// names: correctable ones bare ("RxErr"), uncorrectable ones prefixed
	// with their file's severity ("nonfatal:DLP", "fatal:SDES").
	Types map[string]uint64 `json:"types,omitempty"`
	// Note says which file could not be read or parsed; "" when all three
	// were read.
	Note string `json:"note,omitempty"`
}

// readAER reads the AER statistics files in the sysfs directory dir; nil
// when none of them exists.
func readAER(r fsroot.Root, dir string) *AER {
	files := [3]struct {
		file, total, prefix string
	}{
		{AERCorrectableFile, AERCorrectableTotal, ""},
		{AERNonFatalFile, AERNonFatalTotal, "nonfatal:"},
		{AERFatalFile, AERFatalTotal, "fatal:"},
	}
	var a AER
	totals := [3]*uint64{&a.Correctable, &a.NonFatal, &a.Fatal}
	found := false
	var notes []string
	for i, f := range files {
		b, err := r.ReadFileMax(dir+"/"+f.file, 64<<10)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		found = true
		if err != nil {
			notes = append(notes, f.file+": "+readReason(err))
			continue
		}
		m, err := ParseAERCounters(b)
		if err != nil {
			notes = append(notes, f.file+": "+err.Error())
			continue
		}
		t, ok := m[f.total]
		if !ok {
			notes = append(notes, fmt.Sprintf("%s: %v: no %s line", f.file, ErrBadAER, f.total))
			continue
		}
		*totals[i] = t
		for name, v := range m {
			if v > 0 && name != f.total {
				if a.Types == nil {
					a.Types = map[string]uint64{}
				}
				a.Types[f.prefix+name] = v
			}
		}
	}
	if !found {
		return nil
	}
	a.Note = strings.Join(notes, "; ")
	return &a
}
