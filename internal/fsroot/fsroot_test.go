package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
)

// tree builds a small sysfs-like layout: the class/net link of a virtio NIC
// as this machine's kernel lays it out (/sys/class/net/eth0 ->
// ../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0), and two links
// that escape the root.
func tree(t testing.TB) string {
	t.Helper()
	return snaptest.Write(t, map[string]string{
		"sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/mtu": "1500\n",
		"sys/devices/pci0000:00/0000:00:03.0/vendor":               "0x1af4\n",
		"sys/class/net/eth0": "->../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0",
		"sys/class/net/evil": "->../../../../../../etc",
		"sys/class/net/abs":  "->/etc",
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRealpathInsideRoot(t *testing.T) {
	r := New(tree(t))
	got, err := r.Realpath("/sys/class/net/eth0/mtu")
	if err != nil {
		t.Fatal(err)
	}
	if want := "/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/mtu"; got != want {
		t.Errorf("Realpath = %q, want %q", got, want)
	}
	up, err := r.Realpath("/sys/class/net/eth0/../../../vendor")
	if err != nil || up != "/sys/devices/pci0000:00/0000:00:03.0/vendor" {
		t.Errorf("Realpath through .. = %q, %v", up, err)
	}
}

func TestRealpathRefusesEscapes(t *testing.T) {
	r := New(tree(t))
	for _, p := range []string{"/sys/class/net/evil", "/sys/class/net/abs"} {
		if _, err := r.Realpath(p); !errors.Is(err, ErrEscape) {
			t.Errorf("Realpath(%s) err = %v, want ErrEscape", p, err)
		}
	}
}

func TestReadersAndErrors(t *testing.T) {
	r := New(tree(t))
	if v, err := r.ReadInt("/sys/class/net/eth0/mtu"); err != nil || v != 1500 {
		t.Errorf("ReadInt = %d, %v", v, err)
	}
	if v, err := r.ReadHex("/sys/devices/pci0000:00/0000:00:03.0/vendor", 4); err != nil || v != 0x1af4 {
		t.Errorf("ReadHex = %#x, %v", v, err)
	}
	if _, err := r.ReadString("/sys/class/net/eth0/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := r.ReadInt("/sys/devices/pci0000:00/0000:00:03.0/vendor"); err != nil {
		t.Errorf("0x-prefixed ReadInt: %v", err)
	}
	must(t, os.WriteFile(r.Path("/sys/class/net/eth0/mtu"), []byte("garbage\n"), 0o644))
	if _, err := r.ReadInt("/sys/class/net/eth0/mtu"); err == nil {
		t.Error("garbage parsed as an integer")
	}
	if names, err := r.ReadDir("/sys/class/net"); err != nil || len(names) != 3 || names[0] != "abs" {
		t.Errorf("ReadDir = %v, %v", names, err)
	}
}

func TestLiveRoot(t *testing.T) {
	for _, d := range []string{"", "/", "//"} {
		r := New(d)
		if !r.Live() || r.Dir() != "/" || r.Path("proc/stat") != "/proc/stat" {
			t.Errorf("New(%q): live %v dir %q path %q", d, r.Live(), r.Dir(), r.Path("proc/stat"))
		}
	}
	if New("/tmp/snap").Live() {
		t.Error("a snapshot root is not live")
	}
	if p := New("/tmp/snap").Path("/../../etc/passwd"); p != "/tmp/snap/etc/passwd" {
		t.Errorf("Path climbs out of the root: %s", p)
	}
}

// Hostile paths never panic, never resolve outside the root, and always end
// in a clean absolute kernel path.
func FuzzRealpath(f *testing.F) {
	for _, s := range []string{"/sys/class/net/eth0", "../../..", "/sys/class/net/evil/x", "", "//./..//sys", "/sys/class/net/eth0/../../../../../../../x"} {
		f.Add(s)
	}
	r := New(tree(f))
	f.Fuzz(func(t *testing.T, p string) {
		got, err := r.Realpath(p)
		if err != nil {
			return
		}
		if got == "" || got[0] != '/' || filepath.Clean(got) != got {
			t.Fatalf("Realpath(%q) = %q", p, got)
		}
	})
}

// In a snapshot every reader stays inside the root, not only Realpath.
func TestReadersConfinedToSnapshot(t *testing.T) {
	d := tree(t)
	outside := filepath.Join(filepath.Dir(d), "outside-"+filepath.Base(d))
	must(t, os.MkdirAll(outside, 0o755))
	t.Cleanup(func() { os.RemoveAll(outside) })
	must(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("x\n"), 0o644))
	must(t, os.Symlink("../../../../outside-"+filepath.Base(d), filepath.Join(d, "sys/class/net/out")))
	r := New(d)
	if _, err := os.ReadFile(filepath.Join(d, "sys/class/net/out/secret")); err != nil {
		t.Fatalf("test setup: the escaping link does not reach the file: %v", err)
	}
	if _, err := r.ReadFile("/sys/class/net/out/secret"); !errors.Is(err, ErrEscape) {
		t.Errorf("ReadFile through an escaping link: %v, want ErrEscape", err)
	}
	if _, err := r.ReadDir("/sys/class/net/out"); !errors.Is(err, ErrEscape) {
		t.Errorf("ReadDir through an escaping link: %v, want ErrEscape", err)
	}
	if r.Exists("/sys/class/net/out/secret") {
		t.Error("Exists sees a file outside the snapshot")
	}
	if _, err := r.Readlink("/sys/class/net/out/x"); !errors.Is(err, ErrEscape) {
		t.Errorf("Readlink under an escaping link: %v, want ErrEscape", err)
	}
	if v, err := r.ReadInt("/sys/class/net/eth0/mtu"); err != nil || v != 1500 {
		t.Errorf("ReadInt through the in-root link = %d, %v", v, err)
	}
}
