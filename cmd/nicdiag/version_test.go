package main

import (
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	root := snapWithIDs(t, "virtio-kvm")
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, stderr, code := runCLI(t, append([]string{"--root", root}, args...)...)
		if code != exitOK || !strings.HasPrefix(out, "nicdiag ") || !strings.Contains(out, "go:       "+runtime.Version()) ||
			!strings.Contains(out, "pci.ids:  "+filepath.Join(root, "usr/share/misc/pci.ids")) {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	out, _, code := runCLI(t, "--root", root, "--version", "--json")
	var v versionJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != exitOK || v.Schema != jsonSchema || v.GoVersion != runtime.Version() ||
		v.Version == "" || v.PCIIDs == nil || v.PCIIDs.Path != filepath.Join(root, "usr/share/misc/pci.ids") {
		t.Errorf("exit %d, %v: %s", code, err, out)
	}
	if _, stderr, code := runCLI(t, "version", "extra"); code != exitFail || !strings.Contains(stderr, "see 'nicdiag help version'") {
		t.Errorf("version extra: exit %d, %q", code, stderr)
	}
}

func TestVersionFrom(t *testing.T) {
	v := versionFrom(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
	}})
	if v.Version != "v1.2.3" || v.Revision != "0123abcd" || v.Modified == nil || !*v.Modified || v.GoVersion != "go1.26.8" || v.Time == "" {
		t.Errorf("%+v", v)
	}
	if v := versionFrom(nil); v.Version != "(unknown)" || v.GoVersion != runtime.Version() || v.Modified != nil {
		t.Errorf("no build info: %+v", v)
	}
}

// A binary built with VCS stamping reports the revision it was built from.
func TestVersionRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not in a git checkout")
	}
	bin := filepath.Join(t.TempDir(), "nicdiag")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Skipf("go build -buildvcs=true: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v versionJSON
	if err := json.Unmarshal(out, &v); err == nil && v.Revision == "" {
		t.Skip("the toolchain stamped no VCS information here (a git worktree, or GOFLAGS=-buildvcs=false)")
	}
	if err := json.Unmarshal(out, &v); err != nil || v.Revision != strings.TrimSpace(string(rev)) || v.Modified == nil {
		t.Errorf("%v: %s", err, out)
	}
}

// The binary as released is static: no ELF interpreter (so no dynamic
// loader at start-up, and it runs where the C library differs) and no cgo.
func TestStaticBinary(t *testing.T) {
	bin := binary(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names an ELF interpreter: dynamically linked")
		}
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range bi.Settings {
		if s.Key == "CGO_ENABLED" && s.Value != "0" {
			t.Errorf("CGO_ENABLED=%s", s.Value)
		}
	}
}
