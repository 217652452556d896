package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// The virtio-kvm snapshot's PCI function of eth0.
const virtioFn = "sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0"

// hostileSnap copies the virtio-kvm snapshot into a directory the test may
// damage.
func hostileSnap(t *testing.T) string {
	t.Helper()
	src := snaps + "virtio-kvm"
	if _, err := os.Stat(src); err != nil {
		t.Skipf("snapshot %s not generated yet", src)
	}
	return snaptest.Copy(t, src)
}

// outside writes name, with content, in a directory of its own outside any
// snapshot, as an attacker's symlink would reach it.
func outside(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// relink replaces link (under root) with a symlink to target: absolute as
// given, or, when rel, the relative path that climbs out to it.
func relink(t *testing.T, root, link, target string, rel bool) {
	t.Helper()
	p := filepath.Join(root, link)
	if rel {
		r, err := filepath.Rel(filepath.Dir(p), target)
		if err != nil {
			t.Fatal(err)
		}
		target = r
	}
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("test setup: %s does not reach %s: %v", link, target, err)
	}
}

// cliOutputs runs the text and JSON forms of list, show, check and explain
// on root and returns what each printed, stdout and stderr together.
func cliOutputs(t *testing.T, root string) map[string]string {
	t.Helper()
	outs := map[string]string{}
	for _, args := range [][]string{{"list"}, {"show", "eth0"}, {"check"}, {"explain", "eth0"}} {
		for _, json := range []bool{false, true} {
			cmd := strings.Join(args, " ")
			a := append([]string{"--root", root}, args...)
			if json {
				cmd, a = "--json "+cmd, append([]string{"--json"}, a...)
			}
			out, stderr, code := runCLI(t, a...)
			if code == exitFail {
				t.Errorf("%s: exit %d: %s", cmd, code, stderr)
			}
			outs[cmd] = out + stderr
		}
	}
	return outs
}

// noMarker fails the test when any output holds marker.
func noMarker(t *testing.T, outs map[string]string, marker string) {
	t.Helper()
	for cmd, out := range outs {
		if strings.Contains(out, marker) {
			t.Errorf("%s printed the outside file's %s:\n%s", cmd, marker, out)
		}
	}
}

// saysEscape reports whether show's "Not available" lines name field as a
// symlink that leaves the root.
func saysEscape(show, field string) bool {
	for _, l := range strings.Split(show, "\n") {
		if f, why, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && f == field && strings.TrimSpace(why) == "symlink leaves the root" {
			return true
		}
	}
	return false
}

// A snapshot directory whose ethtool/eth0.json is a symlink out of it: show
// (and every other command) does not print the outside answers, and show
// says why the ethtool facts are missing.
func TestEthtoolSymlinkOutOfSnapshotCLI(t *testing.T) {
	evil := outside(t, "eth0.json", `{"schema":1,"driver":"OUTSIDE_MARKER","version":"OUTSIDE_MARKER","firmware_version":"OUTSIDE_MARKER"}`)
	for _, rel := range []bool{false, true} {
		root := hostileSnap(t)
		relink(t, root, "ethtool/eth0.json", evil, rel)
		outs := cliOutputs(t, root)
		noMarker(t, outs, "OUTSIDE_MARKER")
		if !saysEscape(outs["show eth0"], "ethtool") {
			t.Errorf("rel %v: show does not say why:\n%s", rel, outs["show eth0"])
		}
	}
}

// A snapshot's pci.ids that is a symlink to /etc/shadow (a file standing
// in for it, in pci.ids form so that a read would show) is refused with
// ErrEscape, not opened: its marker is nowhere in the output.
func TestPCIIDsSymlinkToShadowCLI(t *testing.T) {
	shadow := outside(t, "shadow", "root:$6$SHADOW_MARKER:19000:0:99999:7:::\n1af4  SHADOW_MARKER\n\t1041  SHADOW_MARKER\n")
	for _, rel := range []bool{false, true} {
		root := hostileSnap(t)
		relink(t, root, "usr/share/misc/pci.ids", shadow, rel)
		_, err := nicinfo.FindPCIIDs(option.Root(root))
		if !errors.Is(err, fsroot.ErrEscape) || !errors.Is(err, os.ErrPermission) {
			t.Errorf("rel %v: FindPCIIDs = %v; want fsroot.ErrEscape", rel, err)
		}
		outs := cliOutputs(t, root)
		out, stderr, _ := runCLI(t, "--root", root, "version")
		outs["version"] = out + stderr
		noMarker(t, outs, "SHADOW_MARKER")
		if !saysEscape(outs["show eth0"], "pci.names") {
			t.Errorf("rel %v: show does not say why:\n%s", rel, outs["show eth0"])
		}
	}
}

// A driver link that points out of the snapshot, at a directory whose name
// and files carry a marker, names no driver: the commands print neither
// the name nor anything under it, and show says why.
func TestDriverLinkOutOfSnapshotCLI(t *testing.T) {
	drv := filepath.Dir(outside(t, "DRIVER_MARKER/module/version", "DRIVER_MARKER\n"))
	drv = filepath.Dir(drv)
	for _, rel := range []bool{false, true} {
		root := hostileSnap(t)
		relink(t, root, virtioFn+"/driver", drv, rel)
		outs := cliOutputs(t, root)
		noMarker(t, outs, "DRIVER_MARKER")
		if !saysEscape(outs["show eth0"], "pci.driver") {
			t.Errorf("rel %v: show does not say why:\n%s", rel, outs["show eth0"])
		}
	}
}

// Escape sequences in a snapshot's pci.ids names, a driver link's target,
// the ethtool driver and firmware strings and an interface's name never
// reach the text output of list, show, check or explain.
func TestControlCharactersNeverPrinted(t *testing.T) {
	root := hostileSnap(t)
	const esc = "\x1b[2J\x1b]0;pwned\x07\u009b31m\u202e"
	files := map[string]string{
		"usr/share/misc/pci.ids": "1af4  Red" + esc + " Hat\n\t1041  Virtio" + esc + " NIC\n" +
			"C 02  Network" + esc + " controller\n\t00  Ethernet controller\n",
		"ethtool/eth0.json": `{"schema":1,"driver":"virtio\u001b[31m_net","firmware_version":"1.0\r\u009b2K"}`,
	}
	snaptest.Add(t, root, files)
	os.MkdirAll(filepath.Join(root, "sys/bus/pci/drivers/virtio"+esc+"-pci"), 0o755)
	relink(t, root, virtioFn+"/driver", filepath.Join(root, "sys/bus/pci/drivers/virtio"+esc+"-pci"), true)
	// A second name for eth0's netdev, with an escape sequence in it.
	if err := os.Symlink("../../devices/pci0000:00/0000:00:02.0/0000:01:00.0/virtio0/net/eth0",
		filepath.Join(root, "sys/class/net/e\x1b[7mx")); err != nil {
		t.Fatal(err)
	}
	outs := cliOutputs(t, root)
	for cmd, out := range outs {
		if strings.Contains(cmd, "--json") {
			continue // JSON escapes them: "\u001b"
		}
		for _, r := range out {
			if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x202e) {
				t.Errorf("%s: control character %U in the output:\n%q", cmd, r, out)
				break
			}
		}
	}
	// The names are there, cleaned.
	for _, want := range []string{"Red[2J]0;pwned31m Hat", "virtio[2J]0;pwned31m-pci"} {
		if !strings.Contains(outs["show eth0"], want) {
			t.Errorf("show lost %q:\n%s", want, outs["show eth0"])
		}
	}
	if strings.Contains(outs["list"], "[7mx") {
		t.Errorf("list shows the interface whose name has an escape sequence:\n%s", outs["list"])
	}
}
