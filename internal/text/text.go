// Package text holds the string helpers every reader shares for input that
// comes from the host or a snapshot and ends up in a message or in output:
// a hand-made snapshot can put anything in a file name, an attribute or a
// pci.ids line, including escape sequences a terminal would obey.
package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// clipBytes is how much of a hostile value a message keeps.
const clipBytes = 40

// Clip prepares a value read from the host or a snapshot for an error
// message or a Missing entry: Clean removes its terminal control characters,
// and what is left is cut to at most 40 bytes, at a character boundary, with
// "…" appended when it was cut.
func Clip(s string) string {
	s = Clean(s)
	if len(s) <= clipBytes {
		return s
	}
	i := clipBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// Clean returns s without the characters a terminal would act on rather
// than show: C0 and C1 control characters (escape, backspace, carriage
// return, newline, tab, ...), DEL and the Unicode bidirectional controls that
// reorder what is displayed. Bytes that are not UTF-8 become U+FFFD (a raw
// 0x9b is a C1 control sequence introducer to some terminals). Printable
// text, ASCII or not, comes back unchanged and without a copy.
func Clean(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case shown(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// clean reports whether Clean has nothing to remove from s.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return utf8.ValidString(s[i:]) && !strings.ContainsFunc(s[i:], func(r rune) bool { return !shown(r) })
		}
	}
	return true
}

// shown reports whether a terminal displays r rather than obeying it.
func shown(r rune) bool {
	return !unicode.IsControl(r) && !unicode.Is(unicode.Bidi_Control, r)
}

// Join joins values of a string type (PCI addresses, say) with sep.
func Join[S ~string](items []S, sep string) string {
	var b strings.Builder
	for i, s := range items {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(string(s))
	}
	return b.String()
}
