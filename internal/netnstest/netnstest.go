// Package netnstest holds helpers for tests that make throwaway network
// namespaces on the real kernel.
package netnstest

import (
	"fmt"
	"testing"

	"github.com/nicdiag/nicdiag/internal/nsthread"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// New creates a network namespace without moving the calling thread, and
// closes it when the test ends. It skips the test when the namespace
// cannot be made (not root).
func New(t testing.TB) netns.NsHandle {
	t.Helper()
	ns, err := nsthread.New()
	if err != nil {
		t.Skipf("cannot create a network namespace: %v", err)
	}
	t.Cleanup(func() { ns.Close() })
	return ns
}

// Do runs f on a thread switched into ns, then switches the thread back.
// Sockets made in f stay in ns. f runs on another goroutine: it may call
// t.Error but not t.Fatal or t.Skip.
func Do(t testing.TB, ns netns.NsHandle, f func()) {
	t.Helper()
	if err := nsthread.Run(ns, func() error { f(); return nil }); err != nil {
		t.Error(err)
	}
}

// Path names an open namespace handle as a file that can be opened:
// "/proc/self/fd/N".
func Path(ns netns.NsHandle) string { return fmt.Sprintf("/proc/self/fd/%d", int(ns)) }

// Handle opens a netlink handle in ns, closed when the test ends.
func Handle(t testing.TB, ns netns.NsHandle) *netlink.Handle {
	t.Helper()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// Veth adds the veth pair name–peer through h.
func Veth(t testing.TB, h *netlink.Handle, name, peer string) {
	t.Helper()
	la := netlink.NewLinkAttrs()
	la.Name = name
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: peer}); err != nil {
		t.Fatal(err)
	}
}
