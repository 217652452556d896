package irq

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// throwawayHost is a mount namespace and a network namespace made for a
// test, where the live paths a sample reads are those of a fixture tree
// (see newThrowawayHost). The namespaces live while their files are open.
type throwawayHost struct {
	mnt, net int // /proc/thread-self/ns/{mnt,net} of the thread that made them
	ifaces   []string
}

// newThrowawayHost makes, on a thread of its own that then ends, a mount
// namespace (private: nothing propagates back) and a network namespace
// holding veth pairs ifaces[i]–ifaces[i]+"p" of queues queues each, up;
// mounts a fresh sysfs of that network namespace on /sys (its
// /sys/class/net lists the veths, their statistics the kernel's) and binds
// the fixture's files over the live ones: /proc/interrupts, /proc/stat,
// /proc/softirqs, /proc/irq, /sys/devices/pci0000:00 and
// /sys/bus/pci/devices, each where root has it. /proc/net/softnet_stat is
// left the kernel's: a bind mount on it does not hold (/proc/net is the
// reading process's /proc/PID/net, made again at each lookup). It skips b
// without root or namespaces.
func newThrowawayHost(tb testing.TB, root string, ifaces []string, queues int) *throwawayHost {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root for mount and network namespaces")
	}
	h := &throwawayHost{mnt: -1, net: -1, ifaces: ifaces}
	var failed error
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		step := func(what string, err error) bool {
			if err != nil && failed == nil {
				failed = fmt.Errorf("%s: %w", what, err)
			}
			return failed == nil
		}
		if !step("unshare", unix.Unshare(unix.CLONE_NEWNS|unix.CLONE_NEWNET)) ||
			!step("private /", unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")) {
			return
		}
		nl, err := netlink.NewHandle()
		if !step("netlink", err) {
			return
		}
		defer nl.Close()
		for _, name := range ifaces {
			la := netlink.NewLinkAttrs()
			la.Name, la.NumTxQueues, la.NumRxQueues = name, queues, queues
			v := &netlink.Veth{LinkAttrs: la, PeerName: name + "p"}
			if !step("veth "+name, nl.LinkAdd(v)) || !step("up "+name, nl.LinkSetUp(v)) {
				return
			}
			if p, err := nl.LinkByName(name + "p"); !step("peer", err) || !step("up", nl.LinkSetUp(p)) {
				return
			}
		}
		if !step("sysfs", unix.Mount("sysfs", "/sys", "sysfs", 0, "")) {
			return
		}
		for _, p := range []string{"/proc/interrupts", "/proc/stat", "/proc/softirqs", "/proc/irq",
			"/sys/devices/pci0000:00", "/sys/bus/pci/devices"} {
			src := filepath.Join(root, p)
			if _, err := os.Stat(src); err != nil {
				continue
			}
			if _, err := os.Stat(p); err != nil {
				continue // nothing to bind over
			}
			if !step("bind "+p, unix.Mount(src, p, "", unix.MS_BIND, "")) {
				return
			}
		}
		tid := strconv.Itoa(unix.Gettid())
		h.mnt, err = unix.Open("/proc/self/task/"+tid+"/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if !step("mnt ns", err) {
			return
		}
		h.net, err = unix.Open("/proc/self/task/"+tid+"/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		step("net ns", err)
	}()
	<-done
	tb.Cleanup(func() {
		for _, fd := range []int{h.mnt, h.net} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	})
	if failed != nil {
		tb.Skipf("no throwaway host: %v", failed)
	}
	return h
}

// enter moves the calling goroutine's thread into h for good: it stays
// locked to the goroutine and ends with it. Files and sockets opened on
// it are h's.
func (h *throwawayHost) enter(tb testing.TB) {
	tb.Helper()
	runtime.LockOSThread()
	// setns into a mount namespace needs a thread that shares no
	// filesystem information (cwd, root) with the others.
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		tb.Fatal(err)
	}
	if err := unix.Setns(h.mnt, unix.CLONE_NEWNS); err != nil {
		tb.Fatal(err)
	}
	if err := unix.Setns(h.net, unix.CLONE_NEWNET); err != nil {
		tb.Fatal(err)
	}
}
