package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/snapshot"
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

// copySnapshot copies the bundled snapshot name into a new directory,
// symlinks as links.
func copySnapshot(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	snaptest.CopyTo(t, snaps+name, dst)
	return dst
}

// snapshot -o from a hostile --root: a FIFO is refused without blocking and
// a file over the 64 MiB cap is skipped, both named in the manifest; the
// rest is captured and reads back.
func TestSnapshotFromHostileRoot(t *testing.T) {
	src := copySnapshot(t, "82576-minipcie-x1")
	fifo := filepath.Join(src, "proc/interrupts")
	os.Remove(fifo)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	// 64 MiB and a byte, sparse: no disk used.
	if err := os.Truncate(filepath.Join(src, "proc/softirqs"), 64<<20+1); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "s.tar.gz")
	type result struct {
		stdout, stderr string
		code           int
	}
	done := make(chan result, 1)
	go func() {
		o, e, c := runCLI(t, "--root", src, "snapshot", "-o", out)
		done <- result{o, e, c}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("snapshot still running after 30 s: blocked on the FIFO?")
	}
	if r.code != exitOK || !strings.Contains(r.stdout, "files unreadable or refused, listed in nicdiag-snapshot.json") {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	s, err := snapshot.Open(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var m snapshot.Manifest
	b, _ := os.ReadFile(filepath.Join(s.Dir, "nicdiag-snapshot.json"))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"/proc/interrupts: not a regular file", "/proc/softirqs: larger than MaxFileBytes (67108864 bytes)"}
	for _, w := range want {
		found := false
		for _, k := range m.Skipped {
			found = found || k == w
		}
		if !found {
			t.Errorf("manifest does not list %q: %q", w, m.Skipped)
		}
	}
	if list, stderr, code := runCLI(t, "--root", out, "list"); code != exitOK || !strings.Contains(list, "enp1s0f1") {
		t.Errorf("reading it back: exit %d, %q\n%s", code, stderr, list)
	}
}

// --root with an archive over a cap fails in one line naming the cap, and
// leaves nothing in the temporary directory.
func TestSnapshotArchiveOverLimit(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// A header claiming 300 MiB: refused before any data is read.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tar.NewWriter(zw).WriteHeader(&tar.Header{Name: "sys/big", Typeflag: tar.TypeReg, Mode: 0o644, Size: 300 << 20})
	zw.Close()
	p := filepath.Join(t.TempDir(), "bomb.tar.gz")
	os.WriteFile(p, buf.Bytes(), 0o644)
	_, stderr, code := runCLI(t, "--root", p, "list")
	if code != exitFail || !strings.Contains(stderr, "over MaxFileBytes (67108864)") {
		t.Errorf("exit %d, %q", code, stderr)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("left in TMPDIR: %s", ents[0].Name())
	}
}
