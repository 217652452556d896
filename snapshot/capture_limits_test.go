//go:build unix

package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"golang.org/x/sys/unix"
)

// captureWithin runs Capture and fails the test if it has not returned
// within d (a FIFO opened for reading would block it for ever).
func captureWithin(t *testing.T, d time.Duration, dst string, opts ...CaptureOption) (*Manifest, error) {
	t.Helper()
	type result struct {
		m   *Manifest
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := Capture(context.Background(), dst, append(opts, WithEthtool(nil))...)
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		return r.m, r.err
	case <-time.After(d):
		t.Fatalf("Capture still running after %v", d)
		return nil, nil
	}
}

func skippedHas(m *Manifest, prefix, reason string) bool {
	for _, s := range m.Skipped {
		if strings.HasPrefix(s, prefix) && strings.Contains(s, reason) {
			return true
		}
	}
	return false
}

// Capturing from a hostile snapshot directory: a FIFO is refused without
// blocking, a file over MaxFileBytes is skipped, a symlink leaving the root
// is not followed (nothing outside it is copied); each is named in the
// manifest, and the rest is captured.
func TestCaptureHostileRoot(t *testing.T) {
	base := t.TempDir()
	src := filepath.Join(base, "src")
	snaptest.CopyTo(t, filepath.Join("..", "testdata", "snapshots", "82576-minipcie-x1"), src)
	if err := os.Remove(filepath.Join(src, "proc/interrupts")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(src, "proc/interrupts"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	mtu := filepath.Join(src, "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/net/enp1s0f0/mtu")
	os.Remove(mtu)
	if err := unix.Mkfifo(mtu, 0o644); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0 ", 1000)
	os.WriteFile(filepath.Join(src, "proc/softirqs"), []byte(big), 0o644)
	// /proc/irq leads out of the root, to a secret beside it.
	os.MkdirAll(filepath.Join(base, "outside/5"), 0o755)
	os.WriteFile(filepath.Join(base, "outside/5/smp_affinity_list"), []byte("secret\n"), 0o644)
	os.RemoveAll(filepath.Join(src, "proc/irq"))
	if err := os.Symlink("../../outside", filepath.Join(src, "proc/irq")); err != nil {
		t.Fatal(err)
	}

	dst := filepath.Join(base, "dst")
	m, err := captureWithin(t, 20*time.Second, dst, FromRoot(src), CaptureLimits(Limits{MaxFileBytes: 1000}))
	if err != nil {
		t.Fatal(err)
	}
	if !skippedHas(m, "/proc/interrupts:", "not a regular file") {
		t.Errorf("the FIFO is not named: %q", m.Skipped)
	}
	if !skippedHas(m, "/sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/net/enp1s0f0/mtu:", "not a regular file") {
		t.Errorf("the FIFO attribute is not named: %q", m.Skipped)
	}
	if !skippedHas(m, "/proc/softirqs:", "larger than MaxFileBytes (1000 bytes)") {
		t.Errorf("the large file is not named: %q", m.Skipped)
	}
	filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if b, _ := os.ReadFile(p); strings.Contains(string(b), "secret") {
			t.Errorf("%s holds a file from outside the root", p)
		}
		return nil
	})
	if _, err := os.Lstat(filepath.Join(dst, "proc/softirqs")); err == nil {
		t.Error("the large file was copied")
	}
	if len(m.Interfaces) != 2 {
		t.Errorf("captured %v", m.Interfaces)
	}
}

// Past MaxEntries or MaxBytes a capture stops with a *LimitError naming the
// cap, having written no more than it allows.
func TestCaptureLimits(t *testing.T) {
	src := filepath.Join("..", "testdata", "snapshots", "xeon-i350-sriov-bcm5709")
	for _, tc := range []struct {
		lim   Limits
		limit string
	}{
		{Limits{MaxEntries: 50}, "MaxEntries"},
		{Limits{MaxBytes: 4096}, "MaxBytes"},
	} {
		t.Run(tc.limit, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			_, err := captureWithin(t, 20*time.Second, dst, FromRoot(src), CaptureLimits(tc.lim))
			var le *LimitError
			if !errors.Is(err, ErrLimit) || !errors.As(err, &le) || le.Limit != tc.limit {
				t.Fatalf("Capture = %v; want a %s refusal", err, tc.limit)
			}
			t.Log(err)
			os.Remove(filepath.Join(dst, "nicdiag-snapshot.json"))
			n, total, _ := usage(t, dst)
			l := tc.lim.orDefault()
			if n > l.MaxEntries || total > l.MaxBytes {
				t.Errorf("wrote %d entries and %d bytes; limits %+v", n, total, l)
			}
		})
	}
}

// A source of many empty directories writes nothing, but listing them is
// bounded too.
func TestCaptureListingBound(t *testing.T) {
	src := t.TempDir()
	for i := 0; i < 500; i++ {
		os.MkdirAll(filepath.Join(src, "proc/irq", fmt.Sprint(i)), 0o755)
	}
	_, err := captureWithin(t, 20*time.Second, filepath.Join(t.TempDir(), "dst"), FromRoot(src), CaptureLimits(Limits{MaxEntries: 100}))
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "directory names listed") {
		t.Fatalf("Capture = %v; want the listing refused", err)
	}
}

// The manifest lists at most maxSkipped files, then counts the rest.
func TestCaptureSkippedBound(t *testing.T) {
	src := t.TempDir()
	dir := filepath.Join(src, "sys/class/net")
	os.MkdirAll(dir, 0o755)
	for i := 0; i < maxSkipped+5; i++ {
		if err := os.Symlink("../../../..", filepath.Join(dir, fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	m, err := captureWithin(t, 60*time.Second, filepath.Join(t.TempDir(), "dst"), FromRoot(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Skipped) != maxSkipped+1 || m.Skipped[maxSkipped] != "(5 more files not read, not listed)" {
		t.Errorf("%d skipped, last %q", len(m.Skipped), m.Skipped[len(m.Skipped)-1])
	}
	if !skippedHas(m, "/sys/class/net/0:", "escapes the root") {
		t.Errorf("the escaping link is not named: %q", m.Skipped[:3])
	}
}
