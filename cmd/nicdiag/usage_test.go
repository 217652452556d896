package main

import (
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
)

func TestParsePortSpeed(t *testing.T) {
	for in, want := range map[string]float64{
		"1000": 1000, "2.5G": 2500, "2.5g": 2500, "10000M": 10000, "100M": 100, "25Gb/s": 25000,
		"10Gbps": 10000, "100Mb": 100, "0": 0, " 40G ": 40000,
	} {
		if got, err := parsePortSpeed(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "junk", "-3", "NaN", "Inf", "2.5T", "G", "10 G", "1e3x", "0x10", "2.5GG", "b/s"} {
		if got, err := parsePortSpeed(in); err == nil {
			t.Errorf("%q: accepted as %v", in, got)
		}
	}
}

func TestPortSpeedFlag(t *testing.T) {
	root := snaps + "82576-minipcie-x1"
	a, _, _ := runCLI(t, "--root", root, "explain", "--port-speed", "2.5G", "enp1s0f0")
	b, _, _ := runCLI(t, "--root", root, "explain", "--port-speed", "2500", "enp1s0f0")
	if a != b || !strings.Contains(a, "at 2500 Mb/s") {
		t.Errorf("2.5G and 2500 differ:\n%s\n%s", a, b)
	}
	help, _, _ := runCLI(t, "help", "explain")
	if !strings.Contains(help, "--port-speed SPEED") || !strings.Contains(help, "2.5G") {
		t.Errorf("explain help does not give the units:\n%s", help)
	}
	_, stderr, code := runCLI(t, "--root", root, "explain", "--port-speed", "fast", "enp1s0f0")
	if code != exitFail || stderr != "nicdiag explain: invalid value \"fast\" for flag --port-speed: want a line rate in Mb/s (1000) or with a unit (100M, 2.5G), or 0 for the negotiated link speed\nsee 'nicdiag help explain'\n" {
		t.Errorf("exit %d, %q", code, stderr)
	}
}

// A usage error is the one line that is wrong and where the help is, not
// the whole help.
func TestUsageErrorOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		line string
		cmd  string
	}{
		{[]string{"list", "extra"}, `nicdiag list: unexpected argument "extra"`, "list"},
		{[]string{"show"}, "nicdiag show: need exactly one interface name", "show"},
		{[]string{"explain"}, "nicdiag explain: need exactly one interface name or PCI address", "explain"},
		{[]string{"snapshot"}, "nicdiag snapshot: need -o FILE", "snapshot"},
		{[]string{"report"}, "nicdiag report: need exactly one record", "report"},
		{[]string{"check", "--bogus"}, "nicdiag check: flag provided but not defined: --bogus", "check"},
		{[]string{"snapshot", "-o"}, "nicdiag snapshot: flag needs an argument: -o", "snapshot"},
		{[]string{"--bogus", "list"}, "nicdiag: flag provided but not defined: --bogus", ""},
	} {
		_, stderr, code := runCLI(t, c.args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		see := "see 'nicdiag help " + c.cmd + "'"
		if c.cmd == "" {
			see = "see 'nicdiag help'"
		}
		if code != exitFail || len(lines) != 2 || !strings.HasPrefix(lines[0], c.line) || lines[1] != see {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, stderr)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"lsit"}, `unknown command "lsit" (did you mean "list"?)`},
		{[]string{"chekc"}, `(did you mean "check"?)`},
		{[]string{"help", "explian"}, `(did you mean "explain"?)`},
		{[]string{"--root", snaps + "82576-minipcie-x1", "show", "enp1s0f3"}, `"enp1s0f3": no such network interface (did you mean "enp1s0f0"?)`},
		{[]string{"--root", snaps + "82576-minipcie-x1", "check", "enp1s0f0", "enps10f1"}, `(did you mean "enp1s0f1"?)`},
		{[]string{"--root", snaps + "82576-minipcie-x1", "explain", "enp1s0f1x"}, `(did you mean "enp1s0f1"?)`},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != exitFail || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, code, stderr)
		}
	}
	for _, args := range [][]string{{"xyzzy"}, {"--root", snaps + "82576-minipcie-x1", "show", "wlan0"}} {
		if _, stderr, _ := runCLI(t, args...); strings.Contains(stderr, "did you mean") {
			t.Errorf("%v: a far-off name got a suggestion: %q", args, stderr)
		}
	}
	if d := editDistance("lsit", "list"); d != 1 {
		t.Errorf("lsit/list: %d", d)
	}
}

func TestFindingsHeadline(t *testing.T) {
	var b strings.Builder
	renderFindings(&b, []string{"eth0"}, nil, make([]finding.Finding, 1))
	if !strings.Contains(b.String(), "\n1 finding: 0 error, 0 warn, 1 info\n") {
		t.Errorf("%q", b.String())
	}
	b.Reset()
	renderFindings(&b, []string{"eth0"}, nil, make([]finding.Finding, 2))
	if !strings.Contains(b.String(), "\n2 findings: ") {
		t.Errorf("%q", b.String())
	}
}
