package nicinfo

import (
	"slices"
	"strings"
	"testing"
)

// idleParams keeps the idle parameters of a kernel command line, at most
// eight, each clipped: a real one (Debian's GRUB line with
// intel_idle.max_cstate=1 and processor.max_cstate=1 added), and one that
// sets none.
func TestIdleParams(t *testing.T) {
	got := idleParams("BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=5d1e ro quiet intel_idle.max_cstate=1 processor.max_cstate=1 idle=poll cpuidle.off=1")
	if want := []string{"intel_idle.max_cstate=1", "processor.max_cstate=1", "idle=poll", "cpuidle.off=1"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := idleParams("root=/dev/sda1 ro quiet iscsi_initiator=iqn.2024-01.example:host ds=nocloud-net;s=http://user:secret@10.0.0.1/"); len(got) != 0 {
		t.Errorf("no idle parameters: %q", got)
	}
}

// FuzzIdleParams: any command line gives at most eight parameters, each
// one of the line's words with an idle prefix, clipped to 40 bytes; never
// a panic.
func FuzzIdleParams(f *testing.F) {
	f.Add("BOOT_IMAGE=/vmlinuz ro quiet intel_idle.max_cstate=1 processor.max_cstate=1")
	f.Add("idle=poll idle=halt cpuidle.off=1 cpuidle.governor=teo intel_idle.max_cstate=0 idle=nomwait")
	f.Add("")
	f.Add("intel_idle.\xff\x00 idle=" + strings.Repeat("x", 10000))
	f.Fuzz(func(t *testing.T, cmdline string) {
		got := idleParams(cmdline)
		if len(got) > 8 {
			t.Fatalf("%d parameters", len(got))
		}
		for _, p := range got {
			if len(p) > 40+len("…") || !slices.ContainsFunc(strings.Fields(idleParamPrefix), func(pre string) bool { return strings.HasPrefix(p, pre) }) {
				t.Fatalf("%q", p)
			}
		}
	})
}
