package fsroot

import (
	"testing"
)

// The snapshot reads the nicinfo readers make per NIC: a file through the
// class/net link, a file in a real directory, the realpath of the link, a
// directory listing, a driver-style link and an existence test.
const (
	benchLinked = "/sys/class/net/eth0/mtu"
	benchReal   = "/sys/devices/pci0000:00/0000:00:03.0/vendor"
)

func BenchmarkReadFileLinked(b *testing.B) {
	r := New(tree(b))
	for b.Loop() {
		if _, err := r.ReadFile(benchLinked); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFileReal(b *testing.B) {
	r := New(tree(b))
	for b.Loop() {
		if _, err := r.ReadFile(benchReal); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadIntInto(b *testing.B) {
	r := New(tree(b))
	var buf []byte
	for b.Loop() {
		var err error
		if _, buf, err = r.ReadIntInto(benchReal, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRealpath(b *testing.B) {
	r := New(tree(b))
	for b.Loop() {
		if _, err := r.Realpath("/sys/class/net/eth0"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadDir(b *testing.B) {
	r := New(tree(b))
	for b.Loop() {
		if _, err := r.ReadDir("/sys/class/net"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLinkBase(b *testing.B) {
	r := New(tree(b))
	for b.Loop() {
		if _, err := r.LinkBase("/sys/class/net/eth0"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExists(b *testing.B) {
	r := New(tree(b))
	for b.Loop() {
		if !r.Exists(benchReal) {
			b.Fatal("absent")
		}
	}
}

// BenchmarkReadFileLive is the live host's plain open, for comparison.
func BenchmarkReadFileLive(b *testing.B) {
	r := New("/")
	p := New(tree(b)).Path(benchReal)
	for b.Loop() {
		if _, err := r.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
}
