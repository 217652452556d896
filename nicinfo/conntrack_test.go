package nicinfo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
	"github.com/prometheus/procfs"
)

// Real /proc/net/stat/nf_conntrack files:
//   - statLinux618: this project's development VM (Linux 6.18, 2 CPUs),
//     connection tracking unused: the header of 5.x and later, zeros;
//   - statOld: the two sample lines of a 2012 Linux (searched and
//     delete_list columns) quoted in collectl-utils' procfs reader;
//   - statLab: the QEMU lab guest (Debian's Linux 6.1.0-57, 2 CPUs) after
//     internal/lab's links script filled a table of 64 entries with 200
//     UDP flows through tc's ct action: 136 drops on CPU 0.
const (
	statLinux618 = "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n" +
		"00000000  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000  00000000 00000000 00000000 00000000\n" +
		"00000000  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000  00000000 00000000 00000000 00000000\n"
	statOld = "entries  searched found new invalid ignore delete delete_list insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n" +
		"00000085  00003e40 007782a9 00024eab 0000060a 00012c63 0006e7c2 00067e99 0001e5a5 00000000 00000000 00000000 00000000  00000023 00000001 00000023 00000000\n" +
		"00000085  00000c5f 00053a15 0001ce59 00000041 0000d3b2 000069ca 000069c9 0001ce58 00000000 00000000 00000000 00000000  00000000 0000000f 00000000 00000000\n"
	statLab = "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n" +
		"00000040  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000088 00000000 00000088  00000000 00000000 00000000 00000000\n" +
		"00000040  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000  00000000 00000000 00000000 00000000\n"
)

// ReadConntrack sums the statistics by the header's names
// (stack.ConntrackStats); prometheus/procfs, the library the project would
// use for /proc, reads the same bytes to the same drop, early_drop,
// insert_failed and found sums (its oracle role).
func TestConntrackStatsOracle(t *testing.T) {
	for name, in := range map[string]string{"6.18": statLinux618, "old": statOld, "lab": statLab} {
		dir := snaptest.Write(t, map[string]string{
			"proc/sys/net/netfilter/nf_conntrack_count": "1\n", "proc/sys/net/netfilter/nf_conntrack_max": "64\n",
			"proc/net/stat/nf_conntrack": in, "net/stat/nf_conntrack": in,
		})
		c, err := ReadConntrack(option.Root(dir))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pfs, err := procfs.NewFS(dir)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := pfs.ConntrackStat()
		if err != nil {
			t.Fatalf("%s: procfs: %v", name, err)
		}
		var drop, early, failed, found uint64
		for _, e := range ref {
			drop, early, failed, found = drop+e.Drop, early+e.EarlyDrop, failed+e.InsertFailed, found+e.Found
		}
		got := c.Stats
		if got["drop"] != drop || got["early_drop"] != early || got["insert_failed"] != failed || got["found"] != found {
			t.Errorf("%s: %v; procfs drop %d early %d failed %d found %d", name, got, drop, early, failed, found)
		}
	}
	dir := snaptest.Write(t, map[string]string{
		"proc/sys/net/netfilter/nf_conntrack_count": "1\n", "proc/sys/net/netfilter/nf_conntrack_max": "64\n",
		"proc/net/stat/nf_conntrack": statOld + "0001\n",
	})
	if _, err := ReadConntrack(option.Root(dir)); !errors.Is(err, ErrMalformed) {
		t.Errorf("short row: %v", err)
	}
}

// ReadConntrack without nf_conntrack: fs.ErrNotExist; with a table, its
// count, max and statistics.
func TestReadConntrack(t *testing.T) {
	if _, err := ReadConntrack(option.Root(t.TempDir())); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("none: %v", err)
	}
	dir := snaptest.Write(t, map[string]string{
		"proc/sys/net/netfilter/nf_conntrack_count": "64\n", "proc/sys/net/netfilter/nf_conntrack_max": "64\n",
		"proc/net/stat/nf_conntrack": statLab,
	})
	c, err := ReadConntrack(option.Root(dir))
	if err != nil || c.Count != 64 || c.Max != 64 || c.Stats["drop"] != 136 {
		t.Errorf("%+v %v", c, err)
	}
	os.WriteFile(filepath.Join(dir, "proc/sys/net/netfilter/nf_conntrack_max"), []byte("-1\n"), 0o644)
	if _, err := ReadConntrack(option.Root(dir)); !errors.Is(err, ErrMalformed) {
		t.Errorf("negative max: %v", err)
	}
}

// A multi-line uevent (as sysfs writes it) gives the kind on its DEVTYPE
// line alone.
func TestUeventKind(t *testing.T) {
	dir := snaptest.Write(t, map[string]string{
		"sys/class/net/br0":                     "->../../devices/virtual/net/br0",
		"sys/devices/virtual/net/br0/uevent":    "DEVTYPE=bridge\nINTERFACE=br0\nIFINDEX=9\n",
		"sys/devices/virtual/net/br0/operstate": "up\n",
		"sys/devices/virtual/net/vx0/uevent":    "DEVTYPE=vxlan\nINTERFACE=vx0\n",
		"sys/devices/virtual/net/vx0/operstate": "unknown\n",
		"sys/class/net/vx0":                     "->../../devices/virtual/net/vx0",
	})
	nics, err := List(t.Context(), option.Root(dir))
	if err != nil || len(nics) != 2 || nics[0].Kind != "bridge" || nics[1].Kind != "vxlan" {
		t.Errorf("%+v %v", nics, err)
	}
}

// FuzzKernelVersion: any release string parses or is refused, never
// panics; what parses is a release that starts with the two numbers.
func FuzzKernelVersion(f *testing.F) {
	for _, s := range []string{"6.1.0-18-amd64", "5.15.0", "4.9", "6", "", "-1.2", "+6.1", "6.-1", "99999999999999999999.1", "6.1\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, release string) {
		major, minor, ok := KernelVersion(release)
		if !ok {
			return
		}
		if major < 0 || minor < 0 || release == "" || release[0] < '0' || release[0] > '9' {
			t.Fatalf("%q: %d.%d", release, major, minor)
		}
		if a, rest, _ := strings.Cut(release, "."); strconv.Itoa(major) != strings.TrimLeft(a, "0") && major != 0 || rest == "" || rest[0] < '0' || rest[0] > '9' {
			t.Fatalf("%q: %d.%d is not what it starts with", release, major, minor)
		}
	})
}

// KernelVersion reads the numbers a release starts with, and refuses a
// sign or a missing minor.
func TestKernelVersion(t *testing.T) {
	for in, want := range map[string][3]int{"6.1.0-18-amd64": {6, 1, 1}, "5.15": {5, 15, 1}, "-1.2": {0, 0, 0}, "+6.1": {0, 0, 0}, "6": {0, 0, 0}, "6.x": {0, 0, 0}} {
		maj, min, ok := KernelVersion(in)
		if got := [3]int{maj, min, map[bool]int{true: 1}[ok]}; got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}
