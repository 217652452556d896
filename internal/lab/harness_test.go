package lab

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The prelude's sec helper, run by the host's bash, round-trips through
// Sections: stdout with and without a final newline, stderr, exit status. The
// shells run several at once, as they do when other test processes on the
// machine run theirs: each keeps its commands' stderr to itself, and leaves
// no file behind.
func TestPreludeSections(t *testing.T) {
	script := Prelude + `
sec a printf 'one\ntwo\n'
sec b sh -c 'printf partial; echo oops >&2; exit 7'
sec empty true
`
	want := map[string]Section{
		"a":     {Name: "a", Stdout: "one\ntwo\n", Stderr: "", RC: 0},
		"b":     {Name: "b", Stdout: "partial", Stderr: "oops\n", RC: 7},
		"empty": {Name: "empty", Stdout: "", Stderr: "", RC: 0},
	}
	tmp := t.TempDir()
	const shells = 8
	outs := make([][]byte, shells)
	errs := make([]error, shells)
	var wg sync.WaitGroup
	for i := range shells {
		wg.Go(func() {
			cmd := exec.Command("bash", "-c", script)
			cmd.Env = append(cmd.Environ(), "TMPDIR="+tmp)
			outs[i], errs[i] = cmd.Output()
		})
	}
	wg.Wait()
	for i := range shells {
		if errs[i] != nil {
			t.Fatalf("shell %d: %v", i, errs[i])
		}
		s := Sections(string(outs[i]))
		if len(s) != len(want) {
			t.Fatalf("shell %d: sections %v, want %v", i, s, want)
		}
		for k, w := range want {
			if s[k] != w {
				t.Errorf("shell %d: section %s: %#v, want %#v", i, k, s[k], w)
			}
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the prelude left %d file(s) in TMPDIR: %v", len(left), left)
	}
}

// A guest that stops mid-section loses that section only.
func TestSectionsTruncated(t *testing.T) {
	s := Sections("@@@SECTION a\nx\n@@@STDERR a\n\n@@@END a rc=0\n@@@SECTION b\nhalf")
	if len(s) != 1 || s["a"].Stdout != "x" {
		t.Fatalf("got %#v", s)
	}
}

// netfacts lines as the guest prints them (taken from a links and an igb boot).
func TestParseNetFacts(t *testing.T) {
	in := `eth0 fn=0000:00:13.0 pcidrv=e1000 netdrv=e1000 vendor=0x8086 device=0x100e msi= irq=23 link=none physfn= vfs= totalvfs=
eth3 fn=0000:02:00.0 pcidrv=virtio-pci netdrv=virtio_net vendor=0x1af4 device=0x1041 msi=33,34,35 irq=21 link=2.5/1/8.0/4 physfn= vfs= totalvfs=
eth0 fn=0000:01:00.0 pcidrv=igb netdrv=igb vendor=0x8086 device=0x10c9 msi=25,26,27 irq=20 link=2.5/1/2.5/1 physfn= vfs=0000:01:10.0,0000:01:10.2 totalvfs=7
`
	f, err := ParseNetFacts(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 3 {
		t.Fatalf("%d facts", len(f))
	}
	if f[0].Link != nil || f[0].IRQ != 23 || f[0].MSI != nil || f[0].DeviceID != 0x100e {
		t.Errorf("e1000: %+v", f[0])
	}
	if l := f[1].Link; l == nil || *l != (Link{2.5, 1, 8, 4}) || f[1].NetDriver != "virtio_net" || len(f[1].MSI) != 3 {
		t.Errorf("virtio: %+v", f[1])
	}
	if len(f[2].VFs) != 2 || f[2].TotalVFs != 7 {
		t.Errorf("igb: %+v", f[2])
	}
	if _, err := ParseNetFacts("eth0 vendor=zz"); err == nil {
		t.Error("bad vendor accepted")
	}
}

func TestParseInterruptsSoftirqs(t *testing.T) {
	x := ParseInterrupts(`           CPU0       CPU1       
 23:         11          0   IO-APIC  23-fasteoi   eth0
 27:          0          5   PCI-MSI 524288-edge      eth1-rx-0
 24:          0          0   PCI-MSI 262144-edge      PCIe PME, aerdrv
NMI:          0          0   Non-maskable interrupts
`)
	if r := x["eth1-rx-0"]; r.IRQ != 27 || len(r.PerCPU) != 2 || r.PerCPU[1] != 5 {
		t.Errorf("eth1-rx-0: %+v", r)
	}
	if r := x["eth0"]; r.IRQ != 23 || r.PerCPU[0] != 11 {
		t.Errorf("eth0: %+v", r)
	}
	if _, ok := x["PCIe PME, aerdrv"]; !ok || len(x) != 3 {
		t.Errorf("rows: %v", x)
	}
	s := ParseSoftirqs("                    CPU0       CPU1       \n      NET_RX:        660        785\n")
	if v := s["NET_RX"]; len(v) != 2 || v[1] != 785 {
		t.Errorf("NET_RX %v", v)
	}
}

// ethtool -S as the guest's igb prints it: the heading is skipped, the
// per-queue and hardware counters are kept by name.
func TestParseStats(t *testing.T) {
	s := ParseStats("NIC statistics:\n     rx_packets: 695\n     rx_bytes: 998174\n     tx_queue_0_packets: 5\n     rx_queue_1_bytes: 0\nspeed: 1000\nbogus: x\n")
	want := map[string]uint64{"rx_packets": 695, "rx_bytes": 998174, "tx_queue_0_packets": 5, "rx_queue_1_bytes": 0, "speed": 1000}
	if len(s) != len(want) {
		t.Errorf("got %v, want %v", s, want)
	}
	for k, v := range want {
		if got, ok := s[k]; !ok || got != v {
			t.Errorf("%s = %d (present %v), want %d", k, got, ok, v)
		}
	}
}

// The harness has no cache of its own: unset, it refuses; set, build.sh and
// run.sh get it as NICDIAG_LAB_CACHE over whatever the environment says.
func TestHarnessCacheDir(t *testing.T) {
	var none Harness
	if none.Built() {
		t.Error("Harness{} reports a built guest")
	}
	if _, err := none.Run(context.Background(), Config{}); err == nil {
		t.Error("Harness{}.Run: no error")
	}
	if err := none.EnsureBuilt(context.Background(), nil); err == nil {
		t.Error("Harness{}.EnsureBuilt: no error")
	}

	dir := t.TempDir()
	h := Harness{CacheDir: dir}
	if h.Built() {
		t.Errorf("empty %s reports a built guest", dir)
	}
	if _, err := h.Run(context.Background(), Config{}); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Run on an empty cache: %v, want an error naming %s", err, dir)
	}
	t.Setenv("NICDIAG_LAB_CACHE", "/elsewhere")
	cmd, err := h.script(context.Background(), "run.sh")
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, "NICDIAG_LAB_CACHE="); ok {
			got = v // exec uses the last of duplicates
		}
	}
	if got != dir {
		t.Errorf("run.sh gets NICDIAG_LAB_CACHE=%q, want %q", got, dir)
	}
}

// A cache whose guest files are all there but whose stamp is missing or
// names other inputs is not built: a guest made by an older build.sh or
// guest/init must be rebuilt, never booted (its tests would skip or fail
// for the wrong reason).
func TestBuiltNeedsMatchingStamp(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"vmlinux", "initramfs.cpio", "qemu/usr/bin/qemu-system-x86_64", "busybox/bin/busybox"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := Harness{CacheDir: dir}
	if h.Built() {
		t.Error("a cache without a stamp reports a built guest")
	}
	stamp := filepath.Join(dir, inputsStamp)
	if err := os.WriteFile(stamp, []byte("0123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h.Built() {
		t.Error("a cache stamped with other inputs reports a built guest")
	}
	sum, err := inputsHash()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stamp, []byte(sum+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !h.Built() {
		t.Error("a cache stamped with this tree's inputs does not report a built guest")
	}
}
