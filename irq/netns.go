package irq

import (
	"fmt"
	"runtime"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// openNetns opens the network namespace file at path; "" is the caller's
// namespace (netns.None(), which needs no closing).
func openNetns(path string) (netns.NsHandle, error) {
	if path == "" {
		return netns.None(), nil
	}
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return netns.None(), fmt.Errorf("network namespace %s: %w", path, err)
	}
	return ns, nil
}

// netlinkHandle returns a netlink handle whose sockets live in the network
// namespace at path, or one for the caller's namespace when path is "".
// The caller closes it.
func netlinkHandle(path string, families ...int) (*netlink.Handle, error) {
	if path == "" {
		return &netlink.Handle{}, nil // no sockets of its own: the caller's namespace
	}
	ns, err := openNetns(path)
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, families...)
	if err != nil {
		return nil, fmt.Errorf("network namespace %s: %w", path, err)
	}
	return h, nil
}

// ethtoolIn opens an ethtool socket in the network namespace at path ("":
// the caller's). A socket stays in the namespace it was made in, so it is
// made on a thread switched there, which is switched back afterwards (or,
// if that fails, left locked to die with its goroutine).
func ethtoolIn(path string) (*ethtool.Ethtool, error) {
	if path == "" {
		return ethtool.NewEthtool()
	}
	ns, err := openNetns(path)
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	var e *ethtool.Ethtool
	err = inNetns(ns, func() (err error) {
		e, err = ethtool.NewEthtool()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("network namespace %s: %w", path, err)
	}
	return e, nil
}

// inNetns runs f on a thread switched into ns and back (or, if switching
// back fails, left locked to die with its goroutine): what f makes, such
// as a socket, stays in ns.
func inNetns(ns netns.NsHandle, f func() error) error {
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		orig, gerr := netns.Get()
		if gerr != nil {
			err = gerr
			return
		}
		defer orig.Close()
		if err = netns.Set(ns); err != nil {
			return
		}
		err = f()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
	}()
	<-done
	return err
}
