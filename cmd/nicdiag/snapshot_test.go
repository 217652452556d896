package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nicdiag/nicdiag/nicinfo"
)

// snapshot -o FILE.tar.gz, then --root FILE.tar.gz list reproduces the live
// list (Kind and the pci.config note are the documented differences).
func TestSnapshotRoundTrip(t *testing.T) {
	if _, err := os.Stat("/sys/class/net"); err != nil {
		t.Skip("no sysfs")
	}
	file := filepath.Join(t.TempDir(), "host.tar.gz")
	out, stderr, code := runCLI(t, "snapshot", "-o", file)
	if code != exitOK || !strings.Contains(out, "wrote "+file) {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	live, _, _ := runCLI(t, "--json", "list", "--all")
	snap, stderr, code := runCLI(t, "--root", file, "--json", "list", "--all")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var a, b listDoc
	if json.Unmarshal([]byte(live), &a) != nil || json.Unmarshal([]byte(snap), &b) != nil {
		t.Fatal("bad JSON")
	}
	norm := func(d listDoc) string {
		for i := range d.NICs {
			d.NICs[i].Kind = ""
			var keep []string
			for _, m := range d.NICs[i].Missing {
				if !strings.HasPrefix(m, "pci.config:") {
					keep = append(keep, m)
				}
			}
			d.NICs[i].Missing = keep
		}
		j, _ := json.MarshalIndent(d, "", " ")
		return string(j)
	}
	if norm(a) != norm(b) {
		t.Errorf("snapshot list differs from live:\n%s\nlive:\n%s", norm(b), norm(a))
	}
}

func TestSnapshotUsage(t *testing.T) {
	if _, _, code := runCLI(t, "snapshot"); code != exitFail {
		t.Errorf("snapshot without -o: exit %d", code)
	}
	out, _, code := runCLI(t, "snapshot", "--help")
	if code != exitOK || !strings.Contains(out, "nicdiag snapshot -o host.tar.gz") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

// The binary run as nobody (65534) still lists and snapshots the host;
// what needed root is named in Missing.
func TestUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	bin := binary(t)
	work, err := os.MkdirTemp("", "nicdiag-nobody-") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	os.Chmod(work, 0o777)
	cred := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd := exec.Command(bin, "--json", "list", "--all")
	cmd.SysProcAttr = cred
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("list as nobody: %v", err)
	}
	var doc listDoc
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.NICs) == 0 {
		t.Fatalf("%v\n%s", err, out)
	}
	named := false
	for _, n := range doc.NICs {
		for _, m := range n.Missing {
			if strings.HasPrefix(m, "pci.config: needs root") {
				named = true
			}
		}
		if n.Bus == nicinfo.BusPCI && (n.PCI.VendorID == 0 || n.Driver == "") {
			t.Errorf("%s lost its identity without root: %+v", n.Name, n)
		}
	}
	hasPCI := false
	for _, n := range doc.NICs {
		hasPCI = hasPCI || n.PCI != nil
	}
	if hasPCI && !named {
		t.Errorf("no Missing entry names the config space root needs:\n%s", out)
	}

	file := filepath.Join(work, "nobody.tar.gz")
	cmd = exec.Command(bin, "snapshot", "-o", file)
	cmd.SysProcAttr = cred
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "not root") {
		t.Fatalf("snapshot as nobody: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "--root", file, "--json", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if hasPCI && !strings.Contains(string(out), "pci.config: 64 bytes in the snapshot") {
		t.Errorf("snapshot taken as nobody does not say its config space is short:\n%s", out)
	}
}

// -o - writes the .tar.gz to standard output, which --root reads back, and
// the summary to standard error; other archive names are refused in one
// line rather than taken for a directory.
func TestSnapshotStdoutAndOtherArchives(t *testing.T) {
	out, stderr, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "snapshot", "-o", "-")
	if code != exitOK || !strings.HasPrefix(stderr, "wrote standard output: 2 interfaces") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	p := filepath.Join(t.TempDir(), "s.tar.gz")
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	list, stderr, code := runCLI(t, "--root", p, "list")
	if code != exitOK || !strings.Contains(list, "enp1s0f1") {
		t.Errorf("reading the streamed archive back: exit %d, %q\n%s", code, stderr, list)
	}
	dir := t.TempDir()
	for _, name := range []string{"x.tar", "x.tar.xz", "x.zip", "x.gz"} {
		o := filepath.Join(dir, name)
		_, stderr, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "snapshot", "-o", o)
		if code != exitFail || !strings.Contains(stderr, ".tar.gz archives only") || strings.Count(stderr, "\n") != 2 {
			t.Errorf("%s: exit %d, %q", name, code, stderr)
		}
		if _, err := os.Stat(o); err == nil {
			t.Errorf("%s: written anyway", name)
		}
	}
}
