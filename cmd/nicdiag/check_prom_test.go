package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// durationLine is the check's wall time, which differs from run to run.
var durationLine = regexp.MustCompile(`(?m)^nicdiag_check_duration_seconds \S+$`)

// promGolden is the exporter's golden exposition of the seed snapshot as
// check --format prom writes it: without the exporter's counters of its
// own checks.
func promGolden(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../exporter/testdata/82576-minipcie-x1.prom")
	if err != nil {
		t.Fatal(err)
	}
	counters := regexp.MustCompile(`(?m)^(# (HELP|TYPE) )?nicdiag_check(s|_errors)_total .*\n`)
	return string(counters.ReplaceAll(b, nil))
}

// check --format prom writes the exporter's exposition, byte for byte but
// its counters and the duration, and exits as check does.
func TestCheckFormatProm(t *testing.T) {
	out, stderr, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "check", "--format", "prom")
	if code != exitWarn || stderr != "" {
		t.Errorf("exit %d, stderr %q; want %d as for the findings", code, stderr, exitWarn)
	}
	if got := durationLine.ReplaceAllString(out, "nicdiag_check_duration_seconds DURATION"); got != promGolden(t) {
		t.Errorf("check --format prom differs from the exporter's golden exposition:\n%s", out)
	}
}

// -o FILE replaces FILE atomically with the exposition, mode 0644, leaving
// nothing else in its directory; promtool accepts it where installed.
func TestCheckFormatPromFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nicdiag.prom")
	if err := os.WriteFile(path, []byte("stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "check", "--format", "prom", "-o", path)
	if code != exitWarn || out != "" || stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := durationLine.ReplaceAllString(string(b), "nicdiag_check_duration_seconds DURATION"); got != promGolden(t) {
		t.Errorf("%s differs from the exporter's golden exposition:\n%s", path, b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %v, want the file alone", ents)
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(string(b))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
}

// A check that fails still writes the file, with nicdiag_up 0 and no
// other series (so an alert on nicdiag_up fires), says why in one line,
// and exits 3; an unknown interface gets the usual hint.
func TestCheckFormatPromFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nicdiag.prom")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--root", filepath.Join(dir, "gone"), "check", "--format", "prom", "-o", path}, "no such file or directory"},
		{[]string{"--root", snaps + "82576-minipcie-x1", "check", "--format", "prom", "-o", path, "enp1s0f9"}, `did you mean "enp1s0f0"`},
	} {
		os.WriteFile(path, []byte("nicdiag_up 1\n"), 0o644)
		_, stderr, code := runCLI(t, c.args...)
		if code != exitFail || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 3 and %q", c.args, code, stderr, c.msg)
		}
		b, _ := os.ReadFile(path)
		series := regexp.MustCompile(`(?m)^[a-z_]+`).FindAllString(string(b), -1)
		if !strings.Contains(string(b), "\nnicdiag_up 0\n") || strings.Join(series, " ") != "nicdiag_check_duration_seconds nicdiag_up" {
			t.Errorf("%v: wrote\n%s\nwant nicdiag_up 0 and the duration alone", c.args, b)
		}
	}
	// Nowhere to write: exit 3, the path in the message.
	missing := filepath.Join(dir, "nope", "nicdiag.prom")
	_, stderr, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "check", "--format", "prom", "-o", missing)
	if code != exitFail || !strings.Contains(stderr, "cannot write "+missing) {
		t.Errorf("-o into a missing directory: exit %d, stderr %q", code, stderr)
	}
}

// The format flags' misuses are usage errors, in one line.
func TestCheckFormatUsage(t *testing.T) {
	for args, want := range map[string]string{
		"check --format json":        `nicdiag check: --format "json": want text or prom`,
		"check --json --format prom": "nicdiag check: --json and --format prom: choose one",
		"check -o x.prom":            "nicdiag check: -o writes the Prometheus exposition: add --format prom",
	} {
		_, stderr, code := runCLI(t, append([]string{"--root", snaps + "82576-minipcie-x1"}, strings.Fields(args)...)...)
		if code != exitFail || stderr != want+"\nsee 'nicdiag help check'\n" {
			t.Errorf("%s: exit %d, stderr %q", args, code, stderr)
		}
	}
	if _, err := os.Stat("x.prom"); err == nil {
		t.Error("check -o without --format prom wrote x.prom")
	}
}
