package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The completions and the man page come from the command table: every
// command and every flag of every command is in each of them, and each
// passes its shell's (or roff's) own check where that is installed.
func TestCompletionAndMan(t *testing.T) {
	global, cmds := docs()
	render := func(args ...string) string {
		t.Helper()
		out, stderr, code := runCLI(t, args...)
		if code != exitOK || out == "" {
			t.Fatalf("%v: exit %d, %s", args, code, stderr)
		}
		return out
	}
	// How each output writes a flag.
	spell := map[string]func(f flagDoc) string{
		"bash": func(f flagDoc) string { return f.flag },
		"zsh":  func(f flagDoc) string { return "'" + f.flag + "[" },
		"fish": func(f flagDoc) string {
			if len(f.name) == 1 {
				return "-s " + f.name + " "
			}
			return "-l " + f.name + " "
		},
		"man": func(f flagDoc) string { return `\fB` + roff(f.flag) + `\fR` },
	}
	outs := map[string]string{"man": render("man")}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		outs[sh] = render("completion", sh)
	}
	for kind, out := range outs {
		for _, f := range global {
			if !strings.Contains(out, spell[kind](f)) {
				t.Errorf("%s: no global flag %s", kind, f.flag)
			}
		}
		for _, d := range cmds {
			if !strings.Contains(out, d.c.name) {
				t.Errorf("%s: no command %s", kind, d.c.name)
			}
			if kind == "man" && !strings.Contains(out, roff(d.c.synopsis())) {
				t.Errorf("man: no synopsis %q", d.c.synopsis())
			}
			for _, f := range d.flags {
				if !strings.Contains(out, spell[kind](f)) {
					t.Errorf("%s: %s has no flag %s", kind, d.c.name, f.flag)
				}
			}
		}
	}
	// Every command of the table, seen from the help the CLI prints.
	usageText, _, _ := runCLI(t, "help")
	for _, d := range cmds {
		if !strings.Contains(usageText, "  "+d.c.name+" ") {
			t.Errorf("'nicdiag help' lacks %s", d.c.name)
		}
	}
	checkOwnCheckers(t, outs)
}

// checkOwnCheckers runs each completion through its shell's syntax check
// and the man page through groff and man, where they are installed.
func checkOwnCheckers(t *testing.T, outs map[string]string) {
	t.Helper()
	dir := t.TempDir()
	check := func(name string, prog string, args ...string) {
		t.Helper()
		if _, err := exec.LookPath(prog); err != nil {
			t.Logf("%s not installed: %s not checked", prog, name)
			return
		}
		out, err := exec.Command(prog, args...).CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 && prog != "man" {
			t.Errorf("%s %v: %v\n%s", prog, args, err, out)
		}
	}
	for sh, ext := range map[string]string{"bash": "bash", "zsh": "zsh", "fish": "fish"} {
		p := filepath.Join(dir, "nicdiag."+ext)
		os.WriteFile(p, []byte(outs[sh]), 0o644)
		check(sh, sh, "-n", p)
	}
	man := filepath.Join(dir, "nicdiag.1")
	os.WriteFile(man, []byte(outs["man"]), 0o644)
	check("man page", "groff", "-man", "-Tutf8", "-ww", "-z", man)
	if _, err := exec.LookPath("man"); err == nil {
		cmd := exec.Command("man", "-l", man)
		cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "NICDIAG(1)") || !strings.Contains(string(out), "EXIT STATUS") {
			t.Errorf("man -l: %v\n%s", err, out)
		}
	}
}

// In bash, the completion completes commands, a command's flags and, for
// show, interface names.
func TestBashCompletionRuns(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	out, _, _ := runCLI(t, "completion", "bash")
	p := filepath.Join(t.TempDir(), "c.bash")
	os.WriteFile(p, []byte(out), 0o644)
	script := `source "$1"
COMP_WORDS=(nicdiag ex); COMP_CWORD=1; _nicdiag; echo "${COMPREPLY[*]}"
COMP_WORDS=(nicdiag --root x explain --fr); COMP_CWORD=4; _nicdiag; echo "${COMPREPLY[*]}"`
	got, err := exec.Command("bash", "-c", script, "bash", p).CombinedOutput()
	if err != nil || string(got) != "explain\n--frame-size\n" {
		t.Errorf("%v: %q", err, got)
	}
}

func TestCompletionUsage(t *testing.T) {
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"man", "x"}} {
		_, stderr, code := runCLI(t, args...)
		if code != exitFail || !strings.Contains(stderr, "see 'nicdiag help "+args[0]+"'") || strings.Count(stderr, "\n") != 2 {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}
