package irq

import (
	"runtime"

	"github.com/vishvananda/netns"
)

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
