package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	long := strings.Repeat("a", 50)
	for in, want := range map[string]string{
		"":                          "",
		"0000:01:00.0":              "0000:01:00.0",
		long:                        strings.Repeat("a", 40) + "…",
		strings.Repeat("a", 40):     strings.Repeat("a", 40),
		"\x1b[2Jeth0":               "[2Jeth0",
		"bad\r\nline\t":             "badline",
		"\x00\xff":                  "\ufffd",
		"evil\u202eltr":             "evilltr",
		strings.Repeat("é", 30):     strings.Repeat("é", 20) + "…",
		"\u009b31m" + long:          "31m" + strings.Repeat("a", 37) + "…",
		"\x9b31m":                   "\ufffd31m",
		"Realtek RTL8111/8168/8411": "Realtek RTL8111/8168/8411",
	} {
		if got := Clip(in); got != want {
			t.Errorf("Clip(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCleanKeepsPrintableWithoutCopy(t *testing.T) {
	for _, s := range []string{"Intel Corporation", "Realtek Semiconductor Co., Ltd.", "Ethernet Connection (2) I219-LM", "Ångström ünïcode"} {
		if got := Clean(s); got != s {
			t.Errorf("Clean(%q) = %q", s, got)
		}
		if n := testing.AllocsPerRun(10, func() { Clean(s) }); n != 0 {
			t.Errorf("Clean(%q) allocates %v times", s, n)
		}
	}
}

// FuzzClip: whatever goes in, what comes out is valid UTF-8 without control
// characters, at most 40 bytes plus the ellipsis, and Clean is idempotent.
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "eth0", "\x1b]0;pwned\x07", "\xe2\x80", strings.Repeat("ü", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Clip(s)
		if !utf8.ValidString(c) || len(strings.TrimSuffix(c, "…")) > clipBytes {
			t.Fatalf("Clip(%q) = %q", s, c)
		}
		for _, r := range c {
			if !shown(r) {
				t.Fatalf("Clip(%q) = %q keeps %U", s, c, r)
			}
		}
		if d := Clean(s); Clean(d) != d {
			t.Fatalf("Clean not idempotent on %q", s)
		}
	})
}

func TestJoin(t *testing.T) {
	type addr string
	if got := Join([]addr{"0000:01:00.0", "0000:01:00.1"}, " "); got != "0000:01:00.0 0000:01:00.1" {
		t.Errorf("Join = %q", got)
	}
	if got := Join([]addr(nil), ","); got != "" {
		t.Errorf("Join(nil) = %q", got)
	}
}
