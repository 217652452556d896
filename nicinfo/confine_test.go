package nicinfo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/option"
)

// virtioFn is eth0's PCI function in the virtio-kvm snapshot.
const virtioFn = "sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0"

// outsideFile writes a file outside any snapshot, as an attacker's symlink
// would reach it, and returns its path.
func outsideFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(link)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func hasMissing(n *NIC, want string) bool { return slices.Contains(n.Missing, want) }

// A snapshot's ethtool/eth0.json that is a symlink out of the snapshot
// (absolute, or climbing with ..) is refused, not read.
func TestEthtoolSymlinkOutOfSnapshot(t *testing.T) {
	evil := outsideFile(t, "eth0.json", `{"schema":1,"driver":"from-outside"}`)
	for _, abs := range []bool{true, false} {
		dir := copyTree(t, needSnap(t, "virtio-kvm"))
		link := filepath.Join(dir, "ethtool/eth0.json")
		target := evil
		if !abs {
			rel, err := filepath.Rel(filepath.Dir(link), evil)
			if err != nil {
				t.Fatal(err)
			}
			target = rel
		}
		symlink(t, target, link)
		if _, err := os.ReadFile(link); err != nil {
			t.Fatalf("test setup: the link does not reach the file: %v", err)
		}
		a, err := EthtoolFiles(dir).Answers(context.Background(), "eth0")
		if !errors.Is(err, fsroot.ErrEscape) {
			t.Errorf("abs %v: Answers = %+v, %v; want fsroot.ErrEscape", abs, a, err)
		}
		n, err := Get(context.Background(), "eth0", option.Root(dir))
		if err != nil {
			t.Fatal(err)
		}
		if n.Driver == "from-outside" || !hasMissing(n, "ethtool: symlink leaves the root") {
			t.Errorf("abs %v: driver %q, missing %q", abs, n.Driver, n.Missing)
		}
	}
}

// withHostPCIIDs points the host's pci.ids search at paths for one test.
func withHostPCIIDs(t *testing.T, paths ...string) {
	old := pciIDsCandidates
	pciIDsCandidates = paths
	t.Cleanup(func() { pciIDsCandidates = old })
}

const hostIDs = "1af4  Host Vendor\n\t1041  Host NIC\nC 02  Network controller\n\t00  Ethernet controller\n"

// A snapshot's pci.ids that is a symlink out of the snapshot is refused, and
// the host's pci.ids is not read in its place: the names stay empty and
// Missing says why.
func TestPCIIDsSymlinkOutOfSnapshot(t *testing.T) {
	host := outsideFile(t, "pci.ids", hostIDs)
	withHostPCIIDs(t, host)
	dir := copyTree(t, needSnap(t, "virtio-kvm"))
	symlink(t, host, filepath.Join(dir, host)) // the snapshot's copy of the host path
	var q PCIQuery
	q.Add(0x1af4, 0x1041, 0, 0, 0x020000)
	if names, err := LookupNames(&q, option.Root(dir)); !errors.Is(err, fsroot.ErrEscape) || !errors.Is(err, os.ErrPermission) {
		t.Errorf("LookupNames = %+v, %v; want fsroot.ErrEscape and os.ErrPermission", names, err)
	}
	n, err := Get(context.Background(), "eth0", option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	if n.PCI.DeviceName != "" || !hasMissing(n, "pci.names: symlink leaves the root") {
		t.Errorf("device name %q, missing %q", n.PCI.DeviceName, n.Missing)
	}
}

// The host's pci.ids, outside any snapshot, is still read: for the live
// root (through a symlink, as Debian's /usr/share/misc/pci.ids is), for a
// snapshot without one of its own, and when named with WithPCIIDs.
func TestHostPCIIDsReadable(t *testing.T) {
	real := outsideFile(t, "pci.ids", hostIDs)
	link := filepath.Join(t.TempDir(), "pci.ids")
	symlink(t, real, link)
	withHostPCIIDs(t, filepath.Join(t.TempDir(), "absent"), link)
	var q PCIQuery
	q.Add(0x1af4, 0x1041, 0, 0, 0x020000)
	for _, opts := range [][]Option{
		{option.Root("/")},
		{option.Root(needSnap(t, "virtio-kvm"))},
		{option.Root(needSnap(t, "virtio-kvm")), WithPCIIDs(link)},
	} {
		names, err := LookupNames(&q, opts...)
		if err != nil || names.Device(0x1af4, 0x1041) != "Host NIC" || names.source != link {
			t.Errorf("LookupNames = %+v, %v; want the host's names from %s", names, err, link)
		}
	}
}

// mkfifo replaces p with a FIFO and returns a func that opens its write end
// (which frees a reader stuck in open).
func mkfifo(t *testing.T, p string) func() {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
}

// within fails the test when f has not returned in a few seconds; the
// releases then try to unblock it (a reader stuck in open returns when a
// writer opens the FIFO), but the test does not wait for it again.
func within(t *testing.T, f func(), releases ...func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		for _, r := range releases {
			r()
		}
		t.Fatal("blocked on a FIFO in the snapshot")
	}
}

// FIFOs in place of sysfs attributes, a sysfs directory, the ethtool
// answers and pci.ids are refused without blocking; each is named in
// Missing and the rest of the record is read.
func TestFIFOsInSnapshot(t *testing.T) {
	dir := copyTree(t, needSnap(t, "virtio-kvm"))
	host := outsideFile(t, "pci.ids", hostIDs)
	withHostPCIIDs(t, host)
	var releases []func()
	for _, p := range []string{virtioFn + "/vendor", virtioFn + "/msi_irqs", virtioFn + "/config",
		"ethtool/eth0.json", strings.TrimPrefix(host, "/")} {
		if p == strings.TrimPrefix(host, "/") {
			os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		}
		releases = append(releases, mkfifo(t, filepath.Join(dir, p)))
	}
	var n *NIC
	var err error
	within(t, func() { n, err = Get(context.Background(), "eth0", option.Root(dir)) }, releases...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pci.vendor_id: not a regular file", "pci.irqs: not a directory",
		"pci.config: not a regular file", "ethtool: not a regular file", "pci.names: not a regular file"} {
		if !hasMissing(n, want) {
			t.Errorf("missing %q; want %q", n.Missing, want)
		}
	}
	if n.PCI.DeviceID != 0x1041 || n.PCI.VendorID != 0 {
		t.Errorf("pci %04x:%04x; want the device ID read and the vendor left out", n.PCI.VendorID, n.PCI.DeviceID)
	}
}

// ghw reads modalias, revision and numa_node with plain os calls; NoNetdev
// reads none of them, so a FIFO or an escaping link among them neither
// blocks it nor leaks the outside file, and the function is still found.
func TestNoNetdevIgnoresGHWFiles(t *testing.T) {
	const fn1 = "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.1"
	for _, c := range []struct {
		name, file string
		hostile    func(t *testing.T, p string) func()
		missing    []string
	}{
		{"fifo modalias", "/modalias", mkfifo, nil},
		{"escaping revision", "/revision", func(t *testing.T, p string) func() {
			symlink(t, outsideFile(t, "revision", "0x7f\n"), p)
			return func() {}
		}, []string{"pci.revision: symlink leaves the root"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyTree(t, needSnap(t, "i350-dpdk-vfio"))
			release := c.hostile(t, filepath.Join(dir, fn1+c.file))
			var fs []NoNetdevFunction
			var err error
			within(t, func() { fs, err = NoNetdev(context.Background(), option.Root(dir), WithPCIIDs("testdata/pci.ids")) }, release)
			if err != nil || len(fs) != 1 || fs[0].Address != "0000:01:00.1" || fs[0].Driver != "vfio-pci" {
				t.Fatalf("got %+v, %v", fs, err)
			}
			if !slices.Equal(fs[0].Missing, c.missing) || fs[0].Revision == 0x7f {
				t.Errorf("missing %q, revision %#x; want missing %q and the outside file unread", fs[0].Missing, fs[0].Revision, c.missing)
			}
		})
	}
}

// Escape sequences in a hand-made snapshot's pci.ids, ethtool answers and
// sysfs attributes do not reach the record (and so the terminal).
func TestControlCharactersDropped(t *testing.T) {
	dir := copyTree(t, needSnap(t, "virtio-kvm"))
	ids := "1af4  Red\x1b[2J Hat\n\t1041  Virtio\x1b]0;pwned\x07 NIC\nC 02  Network controller\n\t00  Ethernet controller\n"
	for p, c := range map[string]string{
		"usr/share/misc/pci.ids":    ids,
		"ethtool/eth0.json":         `{"schema":1,"driver":"virtio\u001b[31m_net","firmware_version":"1.0\r\u009b2K","errors":{"channels":"no\u202e such"}}`,
		virtioFn + "/local_cpulist": "0-1\x1b[A\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := Get(context.Background(), "eth0", option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	if n.PCI.VendorName != "Red[2J Hat" || n.PCI.DeviceName != "Virtio]0;pwned NIC" || n.Driver != "virtio[31m_net" ||
		n.FirmwareVersion != "1.02K" || n.LocalCPUs != "0-1[A" || !hasMissing(n, "ethtool.channels: no such") {
		t.Errorf("vendor %q device %q driver %q firmware %q cpus %q missing %q",
			n.PCI.VendorName, n.PCI.DeviceName, n.Driver, n.FirmwareVersion, n.LocalCPUs, n.Missing)
	}
}
