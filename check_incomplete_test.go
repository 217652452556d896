package nicdiag

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// incompleteOf returns the nicdiag.incomplete findings of fs by subject.
func incompleteOf(fs []finding.Finding) map[string]finding.Finding {
	out := map[string]finding.Finding{}
	for _, f := range fs {
		if f.Code == finding.NicdiagIncomplete {
			out[f.Subject] = f
		}
	}
	return out
}

// A /proc/interrupts that cannot be parsed (here a directory) means the
// queue checks did not run: a warning about the host, kept whatever the
// selection, instead of a clean result.
func TestIncompleteInterrupts(t *testing.T) {
	root := snaptest.Copy(t, snaps+"i350-minipcie-x1")
	r, err := Check(context.Background(), option.Root(root))
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := finding.Worst(r.Findings); ok && w != finding.Info {
		t.Fatalf("the intact tree is not clean: %v", r.Findings)
	}
	p := filepath.Join(root, "proc/interrupts")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sel := range [][]string{nil, {"enp1s0f1"}} {
		r, err := Check(context.Background(), option.Root(root), WithInterfaces(sel...))
		if err != nil {
			t.Fatal(err)
		}
		f, ok := incompleteOf(r.Findings)[HostSubject]
		if !ok || f.Severity != finding.Warn || !strings.Contains(f.Summary, "/proc/interrupts") || !strings.Contains(f.Summary, "irq.affinity_concentrated") {
			t.Errorf("selection %v: host finding %+v (all: %v)", sel, f, r.Findings)
		}
	}
}

// A PCIe path that cannot be walked: the NIC gets a warning naming the
// PCIe verdicts that were not made.
func TestIncompletePath(t *testing.T) {
	root := snaptest.Copy(t, snaps+"i350-minipcie-x1")
	link := filepath.Join(root, "sys/bus/pci/devices/0000:01:00.0")
	os.Remove(link)
	if err := os.Symlink("../../../devices/pci0000:00/0000:00:1c.0/0000:01:00.1", link); err != nil {
		t.Fatal(err)
	}
	r, err := Check(context.Background(), option.Root(root))
	if err != nil {
		t.Fatal(err)
	}
	f, ok := incompleteOf(r.Findings)["enp1s0f0"]
	if !ok || f.Severity != finding.Warn || !strings.Contains(f.Summary, "PCIe path could not be walked") || !strings.Contains(f.Summary, "pcie.bottleneck") {
		t.Errorf("enp1s0f0: %+v (all: %v)", f, r.Findings)
	}
	if g, ok := incompleteOf(r.Findings)["enp1s0f1"]; ok && g.Severity != finding.Info {
		t.Errorf("enp1s0f1, whose path is intact: %+v", g)
	}
}

// Missing privilege alone is info; any other cause is warn. Entries about
// one subject join into one finding at the worst severity.
func TestIncompleteSeverity(t *testing.T) {
	perm := &fs.PathError{Op: "open", Path: "/proc/interrupts", Err: fs.ErrPermission}
	h := &Host{}
	h.unread(PartInterrupts, "", perm)
	fs := incompleteCheck.Run(h)
	if len(fs) != 1 || fs[0].Severity != finding.Info || fs[0].Subject != HostSubject {
		t.Fatalf("permission only: %v", fs)
	}
	h.unread(PartNoNetdev, "", errors.New("ghw: boom"))
	h.unread(PartBudget, "eth0", fmt.Errorf("budget: %w", perm))
	fs = incompleteCheck.Run(h)
	by := incompleteOf(fs)
	if len(fs) != 2 || by[HostSubject].Severity != finding.Warn || by["eth0"].Severity != finding.Info ||
		!strings.Contains(by[HostSubject].Summary, "without a netdev") || !strings.Contains(by[HostSubject].Summary, "/proc/interrupts") {
		t.Errorf("joined: %v", fs)
	}
}

// A judged NIC whose path has config space cut to the header for lack of
// root gets one info finding naming what that weakens, not one per hop.
func TestIncompleteNeedsRoot(t *testing.T) {
	r, err := Check(context.Background(), option.Root(snaps+"xeon-i350-sriov-bcm5709"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range r.Findings {
		if f.Code != finding.NicdiagIncomplete {
			continue
		}
		n++
		if f.Severity != finding.Info || !strings.Contains(f.Summary, "MPS is assumed 128 bytes and MRRS 512") || !strings.Contains(f.Summary, "pcie.idle_downtrained") {
			t.Errorf("%v", f)
		}
	}
	if n == 0 {
		t.Error("no nicdiag.incomplete for a tree whose config space is 64 bytes")
	}
}

// A module EEPROM the kernel would not read: without CAP_NET_ADMIN the
// module EEPROM request answers EPERM (seen with `setpriv
// --inh-caps=-all --bounding-set=-all,+sys_admin nicdiag --json show`),
// which the ethtool answers record as its text. The port's module
// diagnostics were not judged: an info finding naming the capability. A
// module EEPROM that cannot be decoded is a warning; a twisted-pair port,
// which holds no module, gets nothing.
func TestIncompleteModule(t *testing.T) {
	run := func(port string, edit func(a *nicinfo.EthtoolAnswers)) *finding.Finding {
		v := variant(t, "e810-ice-numa1").ethtool("enp162s0f0", func(a *nicinfo.EthtoolAnswers) {
			a.Link.Port = port
			edit(a)
		})
		f, ok := incompleteOf(checkTree(t, v.dir, WithInterfaces("enp162s0f0")))["enp162s0f0"]
		if !ok {
			return nil
		}
		return &f
	}
	eperm := func(a *nicinfo.EthtoolAnswers) {
		a.Errors = map[string]string{"module_eeprom": "operation not permitted"}
	}
	f := run("DA", eperm)
	if f == nil || f.Severity != finding.Info || !strings.Contains(f.Summary, "nic.module_diagnostics") ||
		!strings.Contains(f.Summary, "CAP_NET_ADMIN") || !strings.Contains(f.Fix, "CAP_NET_ADMIN") || strings.Contains(f.Fix, "CAP_SYS_ADMIN") {
		t.Errorf("EPERM: %v", f)
	}
	if f := run("TP", eperm); f != nil {
		t.Errorf("a twisted-pair port: %v", f)
	}
	f = run("FIBRE", func(a *nicinfo.EthtoolAnswers) {
		a.Module = []nicinfo.ModulePage{{I2C: 0x50, Data: make([]byte, 100)}}
	})
	if f == nil || f.Severity != finding.Warn || !strings.Contains(f.Summary, "could not be read or decoded") {
		t.Errorf("a module EEPROM cut short: %v", f)
	}
}
