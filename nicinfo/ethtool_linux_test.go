package nicinfo

import (
	"testing"
	"unsafe"

	"github.com/safchain/ethtool"
)

// The ioctl structs have the kernel's sizes: struct ifreq is 40 bytes on
// 64-bit and 32 on 32-bit; struct ethtool_link_settings is 48 bytes before
// its masks.
func TestIoctlStructSizes(t *testing.T) {
	want := uintptr(40)
	if unsafe.Sizeof(uintptr(0)) == 4 {
		want = 32
	}
	if got := unsafe.Sizeof(ifreqPtr{}); got != want {
		t.Errorf("sizeof(ifreq) = %d, want %d", got, want)
	}
	if got := unsafe.Offsetof(linkSettings{}.masks); got != 48 {
		t.Errorf("masks at %d, want 48", got)
	}
	if got := unsafe.Offsetof(linkSettings{}.nwords); got != 15 {
		t.Errorf("nwords at %d, want 15", got)
	}
}

// struct ethtool_eee is 40 bytes, struct ethtool_pauseparam 16.
func TestEEEPauseStructSizes(t *testing.T) {
	if got := unsafe.Sizeof(ethtoolEEE{}); got != 40 {
		t.Errorf("sizeof(ethtool_eee) = %d, want 40", got)
	}
	if got := unsafe.Sizeof(ethtool.Pause{}); got != 16 {
		t.Errorf("sizeof(ethtool_pauseparam) = %d, want 16", got)
	}
}
