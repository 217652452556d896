package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/internal/testbin"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// snapWithIDs copies a snapshot and adds nicinfo's pci.ids excerpt at
// usr/share/misc/pci.ids, so names do not depend on the test host.
func snapWithIDs(t *testing.T, name string) string {
	t.Helper()
	src := snaps + name
	if _, err := os.Stat(src); err != nil {
		t.Skipf("snapshot %s not generated yet", name)
	}
	dst := snaptest.Copy(t, src)
	ids, err := os.ReadFile("../../nicinfo/testdata/pci.ids")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dst, "usr/share/misc"), 0o755)
	if err := os.WriteFile(filepath.Join(dst, "usr/share/misc/pci.ids"), ids, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds nicdiag once into a world-readable directory, so that it
// can also run as another user. It is built as released: static, without
// cgo (TestStaticBinary checks that it is).
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "nicdiag-bin-")
		if err != nil {
			binErr = err
			return
		}
		os.Chmod(dir, 0o755)
		binPath = filepath.Join(dir, "nicdiag")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v\n%s", binErr, binPath)
	}
	return binPath
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if binPath != "" && binErr == nil {
		os.RemoveAll(filepath.Dir(binPath))
	}
	testbin.Remove()
	os.Exit(code)
}

// throwawayNetns adds a network namespace named prefix-PID with ip(8),
// deleted at cleanup, or skips without root or ip. ip runs `ip ARGS` and
// fails the test when it fails.
func throwawayNetns(t *testing.T, prefix string) (ns string, ip func(args ...string)) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip(8)")
	}
	ns = fmt.Sprintf("%s-%d", prefix, os.Getpid())
	ip = func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	ip("netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	return ns, ip
}
