package nicinfo

import (
	"context"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// The real kernel: in a throwaway network namespace with its own sysfs
// (as `ip netns exec` and a container mount it), every PCI NIC of the
// caller's namespace is a function whose netdev is in another namespace,
// not one without a netdev.
func TestKernelNoNetdevOtherNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network and mount namespaces")
	}
	nics, err := List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // address → driver
	for _, n := range nics {
		if n.PCI != nil && n.PCI.Driver != "" {
			want[string(n.PCI.Address)] = n.PCI.Driver
		}
	}
	if len(want) == 0 {
		t.Skip("no PCI NIC here")
	}
	var fs []NoNetdevFunction
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			done <- err
			return
		}
		if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
			done <- err
			return
		}
		var err error
		fs, err = NoNetdev(context.Background())
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range fs {
		if drv, ok := want[string(f.Address)]; ok {
			seen[string(f.Address)] = true
			if !f.OtherNetns || f.Note() != "netdev in another network namespace ("+drv+")" {
				t.Errorf("%s: %+v, note %q", f.Address, f, f.Note())
			}
		}
	}
	for a := range want {
		if !seen[a] {
			t.Errorf("%s is not listed from the other namespace: %+v", a, fs)
		}
	}
}
