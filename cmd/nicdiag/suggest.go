package main

import (
	"fmt"
	"strings"
)

// didYouMean returns ` (did you mean "x"?)` for the candidate closest to s
// by edit distance, when one is close enough to be a typo (at most 2 edits,
// and fewer than half of s), else "".
func didYouMean(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD && 2*d < len([]rune(s)) {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the optimal-string-alignment distance between a and b
// in runes: insertions, deletions, substitutions and swaps of two
// neighbours ("lsit" is one edit from "list").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// longFlags writes the multi-letter flags the flag package names in its
// errors (-port-speed) as the help does (--port-speed): a '-' at the start
// or after a space or colon, followed by at least two of [a-z-], the first
// a letter. By hand, not with a regexp: every command would link regexp
// for this one error path.
func longFlags(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '-' && (i == 0 || s[i-1] == ' ' || s[i-1] == ':') && i+2 < len(s) &&
			isLower(s[i+1]) && (isLower(s[i+2]) || s[i+2] == '-') {
			b.WriteByte('-')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
