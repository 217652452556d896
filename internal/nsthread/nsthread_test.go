package nsthread

import (
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netns"
)

// TestRunSwitchesOnlyItsThread makes a namespace, runs f in it, and checks
// that f saw that namespace while the caller's thread stayed where it was.
func TestRunSwitchesOnlyItsThread(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	ns, err := New()
	if err != nil {
		t.Skipf("cannot make a network namespace: %v", err)
	}
	defer ns.Close()
	if ns.Equal(before) {
		t.Fatal("New returned the caller's namespace")
	}
	var seen netns.NsHandle
	if err := Run(ns, func() error {
		var err error
		seen, err = netns.Get()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer seen.Close()
	if !seen.Equal(ns) {
		t.Errorf("f ran in %v, want %v", seen, ns)
	}
	after, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if !after.Equal(before) {
		t.Errorf("the caller's thread moved from %v to %v", before, after)
	}
}

// TestRunErrors refuses a closed handle without running f, and returns
// f's error as it is.
func TestRunErrors(t *testing.T) {
	ran := false
	if err := Run(netns.None(), func() error { ran = true; return nil }); err == nil || ran {
		t.Errorf("Run(None) = %v, ran %v: want an error and f not run", err, ran)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch namespaces")
	}
	self, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	want := errors.New("from f")
	if err := Run(self, func() error { return want }); !errors.Is(err, want) {
		t.Errorf("Run = %v, want f's error", err)
	}
}
