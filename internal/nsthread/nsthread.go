// Package nsthread runs code on an OS thread switched into another network
// namespace. A network namespace belongs to a thread, not to a process, so
// the switch is made on a locked thread of a goroutine of its own, and
// what that code makes there (a socket, a /proc/thread-self/net file
// opened) stays in the namespace after the thread has switched back.
package nsthread

import (
	"runtime"

	"github.com/vishvananda/netns"
)

// Run runs f on a thread switched into ns, then switches the thread back,
// and returns f's error, or the error of the switch into ns (f then has
// not run).
func Run(ns netns.NsHandle, f func() error) error {
	return onThread(func() error {
		if err := netns.Set(ns); err != nil {
			return err
		}
		return f()
	})
}

// New makes a network namespace without moving the calling thread into
// it, and returns its handle, which the caller closes.
func New() (netns.NsHandle, error) {
	var ns netns.NsHandle
	err := onThread(func() error {
		var err error
		ns, err = netns.New()
		return err
	})
	return ns, err
}

// onThread runs f on a locked thread of a goroutine of its own, then puts
// the thread back in the namespace it started in. A thread that cannot be
// put back stays locked and ends with its goroutine, so that no other
// goroutine runs in the wrong namespace.
func onThread(f func() error) error {
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
		err = f()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
	}()
	<-done
	return err
}
