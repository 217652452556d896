package main

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestLongFlags: the hand-written rewrite agrees with the regexp it
// replaced on the flag package's errors and on random strings of its
// alphabet.
func TestLongFlags(t *testing.T) {
	re := regexp.MustCompile(`(^|[ :])-([a-z][a-z-]+)`)
	cases := []string{
		"flag provided but not defined: -bogus",
		`invalid value "NaN" for flag -port-speed: not a rate`,
		"-x is short", "--already long", "a-b-c", "-ab", "-a", ":-ab", " -a-", "", "-",
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab- :xZ"
	for range 5000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := longFlags(s), re.ReplaceAllString(s, "$1--$2"); got != want {
			t.Fatalf("longFlags(%q) = %q; the regexp gives %q", s, got, want)
		}
	}
}
