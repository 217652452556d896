package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The live host, read in a throwaway network namespace (with a mount
// namespace of its own, so that /sys is that namespace's sysfs): a veth
// enslaved to a bridge reads as its port, ip_forward (per namespace) set
// to 1 reads as on, and a capture of that host lists the same, features
// and bridge included.
func TestLiveBridgePortCapture(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network and mount namespaces")
	}
	if testing.Short() {
		t.Skip("mounts sysfs in a private mount namespace")
	}
	dst := filepath.Join(t.TempDir(), "snap")
	r, err := bridgeHost(dst)
	if err != nil {
		t.Fatal(err)
	}
	live, captured, fwLive, fwSnap := r.live, r.captured, r.fwLive, r.fwSnap
	bridge := map[string]string{}
	for _, n := range live {
		bridge[n.Name] = n.Bridge
		if n.Name == "ndbr0" && strings.Join(n.Lower, " ") != "ndport0" {
			t.Errorf("ndbr0 Lower %q, want its port ndport0 (lower_ndport0)", n.Lower)
		}
		if g, ok := n.Features[nicinfo.FeatureGRO]; n.Name == "ndport0" && (!ok || g.Fixed) {
			t.Errorf("ndport0 features %v", n.Features)
		}
	}
	if len(live) != 4 || bridge["ndport0"] != "ndbr0" || bridge["ndport1"] != "" || bridge["ndbr0"] != "" || bridge["lo"] != "" {
		t.Errorf("live bridges %v", bridge)
	}
	if fwLive.IPv4 == nil || !*fwLive.IPv4 || fwSnap.IPv4 == nil || !*fwSnap.IPv4 {
		t.Errorf("ip_forward live %+v, in the capture %+v", fwLive, fwSnap)
	}
	if g, w := asJSON(t, liveOnly(captured)), asJSON(t, liveOnly(live)); g != w {
		t.Errorf("capture lists\n%s\nlive lists\n%s", g, w)
	}
}

// bridgeReadings are what bridgeHost read: the NICs and forwarding of the
// live namespace, and of its capture.
type bridgeReadings struct {
	live, captured []nicinfo.NIC
	fwLive, fwSnap nicinfo.Forwarding
}

// bridgeHost makes, on a thread with network and mount namespaces of its
// own, the bridge ndbr0 with the veth port ndport0 (peer ndport1), mounts
// that namespace's sysfs on /sys, sets ip_forward, and reads the host
// live and as captured into dst.
func bridgeHost(dst string) (bridgeReadings, error) {
	var r bridgeReadings
	var failed error
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The thread gets namespaces of its own and is never handed back:
		// it ends with the goroutine.
		runtime.LockOSThread()
		step := func(err error) bool {
			if err != nil && failed == nil {
				failed = err
			}
			return failed == nil
		}
		if !step(unix.Unshare(unix.CLONE_NEWNS)) ||
			!step(unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")) {
			return
		}
		ns, err := netns.New() // this thread moves into it
		if !step(err) {
			return
		}
		defer ns.Close()
		h, err := netlink.NewHandleAt(ns)
		if !step(err) {
			return
		}
		defer h.Close()
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "ndbr0"}}
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "ndport0"}, PeerName: "ndport1"}
		if !step(h.LinkAdd(br)) || !step(h.LinkAdd(veth)) || !step(h.LinkSetMaster(veth, br)) ||
			!step(unix.Mount("sysfs", "/sys", "sysfs", 0, "")) ||
			!step(os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1\n"), 0o644)) {
			return
		}
		ctx := context.Background()
		r.live, err = nicinfo.List(ctx)
		if !step(err) {
			return
		}
		r.fwLive, err = nicinfo.ReadForwarding()
		if !step(err) {
			return
		}
		if _, err := Capture(ctx, dst); !step(err) {
			return
		}
		r.captured, err = nicinfo.List(ctx, option.Root(dst))
		if !step(err) {
			return
		}
		r.fwSnap, err = nicinfo.ReadForwarding(option.Root(dst))
		step(err)
	}()
	<-done
	return r, failed
}
