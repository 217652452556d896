package nicdiag

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// A root that does not exist, or holds neither sys/ nor proc/, is refused:
// read as a host it would have no NICs and look clean.
func TestInspectRefusesNonRoots(t *testing.T) {
	ctx := context.Background()
	if _, err := Check(ctx, option.Root("/nonexistent")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("nonexistent root: err = %v, want os.ErrNotExist", err)
	}
	if _, err := Check(ctx, option.Root(t.TempDir())); !errors.Is(err, ErrNotRoot) {
		t.Errorf("empty directory: err = %v, want ErrNotRoot", err)
	}
	if _, err := Explain(ctx, "eth0", budget.Workload{}, option.Root(t.TempDir())); !errors.Is(err, ErrNotRoot) {
		t.Errorf("explain on an empty directory: err = %v, want ErrNotRoot", err)
	}
}

// Inspect reads every fact once into one record per network function,
// with or without a netdev, keyed by typed PCI address.
func TestInspectOneRecordPerFunction(t *testing.T) {
	h, err := Inspect(context.Background(), option.Root(snaps+"i350-dpdk-vfio"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range h.NICs {
		ids = append(ids, n.ID())
	}
	if !slices.Equal(ids, []string{"enp1s0f0", "0000:01:00.1"}) {
		t.Fatalf("records %v, want enp1s0f0 and the vfio-pci function", ids)
	}
	bare := h.NICs[1]
	if bare.Netdev() || bare.NoNetdev == nil || bare.PCI.Address != "0000:01:00.1" || bare.Path == nil || bare.Budget == nil {
		t.Errorf("no-netdev record %+v", bare)
	}
	if n := h.NICs[0]; n.Queues == nil || n.Path == nil || n.Budget == nil || bare.Queues != nil {
		t.Errorf("enp1s0f0 queues %v path %v budget %v", n.Queues, n.Path != nil, n.Budget != nil)
	}
	for _, name := range []string{"0000:01:00.1", "01:00.1", "enp1s0f0", "0000:01:00.0"} {
		if _, err := h.Lookup(name); err != nil {
			t.Errorf("Lookup(%q): %v", name, err)
		}
	}
	if _, err := h.Lookup("0000:01:00.7"); !errors.Is(err, nicinfo.ErrNoInterface) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Lookup of an absent address: %v", err)
	}
}

// Check de-duplicates on (code, subject) once, over every checker, and
// keeps only findings about the selection.
func TestHostCheckDedupesAndFilters(t *testing.T) {
	h, err := Inspect(context.Background(), option.Root(snaps+"82576-minipcie-x1"), WithInterfaces("enp1s0f1"))
	if err != nil {
		t.Fatal(err)
	}
	twice := Checker{Name: "twice", Codes: []finding.Code{"test.twice"}, Run: func(*Host) []finding.Finding {
		f := finding.Finding{Code: "test.twice", Subject: "enp1s0f1", Summary: "once"}
		g := f
		g.Summary = "a second wording"
		other := finding.Finding{Code: "test.twice", Subject: "enp1s0f0"}
		return []finding.Finding{f, g, other}
	}}
	fs := h.Check(twice, twice)
	if len(fs) != 1 || fs[0].Summary != "once" {
		t.Errorf("findings %+v, want the first enp1s0f1 one only", fs)
	}
	for _, c := range Checkers() {
		if c.Name == "" || len(c.Codes) == 0 || c.Run == nil {
			t.Errorf("checker %+v lacks a name, codes or a function", c)
		}
		for _, f := range c.Run(h) {
			if !slices.Contains(c.Codes, f.Code) {
				t.Errorf("checker %q emitted %s, not among its codes %v", c.Name, f.Code, c.Codes)
			}
		}
	}
}

// WithInventoryOnly reads the inventory and identities, nothing of the
// paths or queues (what `nicdiag list` shows).
func TestInspectInventoryOnly(t *testing.T) {
	h, err := Inspect(context.Background(), option.Root(snaps+"ccr2004-host"), WithInventoryOnly())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.NICs) == 0 || len(h.Identity) == 0 || h.Interrupts != nil {
		t.Fatalf("%d NICs, %d identities, interrupts %v", len(h.NICs), len(h.Identity), h.Interrupts != nil)
	}
	for _, n := range h.NICs {
		if n.Path != nil || n.Budget != nil || n.Queues != nil {
			t.Errorf("%s: path, budget or queues read", n.ID())
		}
	}
}

// Review cases: a Host that did not read a NIC's path refuses to explain it
// (no panic); explain budgets a known masquerade with what it moves, as
// check does; a card's identity verdict stays when another of its
// functions is the one checked.
func TestHostExplainAndIdentityEdges(t *testing.T) {
	ctx := context.Background()
	h, err := Inspect(ctx, option.Root(snaps+"x722-lewisburg"), WithInventoryOnly())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Explain("eno1", budget.Workload{}); !errors.Is(err, ErrNotInspected) {
		t.Errorf("inventory-only explain: %v", err)
	}
	if b, err := budget.For(&h.NICs[0].NIC, nil, nil, budget.Workload{}); err != nil || b.NoPCIe == "" {
		t.Errorf("nil path: %+v, %v", b, err)
	}
	b, err := Explain(ctx, "enp1s0f0", budget.Workload{}, option.Root(snaps+"ccr2004-host"))
	if err != nil || b.PortSpeedSource != budget.FromRealDevice || b.Bound != budget.BoundEthernet {
		t.Errorf("CCR2004 explain: %+v, %v; want what the card moves, Ethernet-bound", b, err)
	}
	r, err := Check(ctx, option.Root(snaps+"ccr2004-gen1-x1"), WithInterfaces("enp1s0f1"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(r.Findings, func(f finding.Finding) bool { return f.Code == finding.NICMisidentified }) {
		t.Errorf("checking the card's second function loses nic.misidentified: %v", r.Findings)
	}
}

// A driver the known-device table does not list for the ID (here a damaged
// driver link) is an info-level oddity: the link speed stays real, and the
// seed's bottleneck stays a warning.
func TestWeakIdentityKeepsTheBottleneck(t *testing.T) {
	dir := snaptest.Copy(t, snaps+"82576-minipcie-x1")
	link := filepath.Join(dir, "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/driver")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../bus/pci/drivers/does-not-exist", link); err != nil {
		t.Fatal(err)
	}
	r, err := Check(context.Background(), option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	c := codes(r.Findings)
	if c[finding.PCIeBottleneck] != finding.Warn || c[finding.NICMisidentified] != finding.Info {
		t.Errorf("findings %v: want the bottleneck at warn beside an info misidentification", r.Findings)
	}
}

// TestCorruptSiblingClass: a garbage class attribute on the 82576's second
// function must not drop it from the ports sharing the x1 link: the real
// pcie.bottleneck stays, the budget still counts two ports, and the hop
// says what it could not read. Without its netdev the sibling still counts,
// by sharing the first function's vendor:device ID.
func TestCorruptSiblingClass(t *testing.T) {
	for _, tc := range []struct {
		name   string
		netdev bool
	}{{"with its netdev", true}, {"without a netdev", false}} {
		t.Run(tc.name, func(t *testing.T) {
			root := snaptest.Copy(t, filepath.Join("testdata", "snapshots", "82576-minipcie-x1"))
			fn := filepath.Join(root, "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.1")
			if err := os.WriteFile(filepath.Join(fn, "class"), []byte("0xzz\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if !tc.netdev {
				if err := os.RemoveAll(filepath.Join(fn, "net")); err != nil {
					t.Fatal(err)
				}
				os.Remove(filepath.Join(root, "sys/class/net/enp1s0f1"))
			}
			r, err := Check(context.Background(), option.Root(root))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(r.Findings, func(f finding.Finding) bool { return f.Code == finding.PCIeBottleneck }) {
				t.Fatalf("pcie.bottleneck lost: %v", r.Findings)
			}
			n, err := r.Host.Lookup("enp1s0f0")
			if err != nil {
				t.Fatal(err)
			}
			if n.Budget == nil || n.Budget.Workload.Ports != 2 {
				t.Fatalf("budget %+v: want 2 ports", n.Budget)
			}
			var notes []string
			for _, h := range n.Path.Hops {
				notes = append(notes, h.Notes...)
			}
			if !slices.ContainsFunc(notes, func(s string) bool {
				return strings.Contains(s, "the class of 0000:01:00.1 could not be read") && strings.Contains(s, "counted as a network port")
			}) {
				t.Errorf("no note on the unread class: %q", notes)
			}
		})
	}
}

// Every code a checker may emit has its row in the README's finding table.
func TestEveryCodeInREADME(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Checkers() {
		for _, code := range c.Codes {
			if !strings.Contains(string(b), "`"+string(code)+"`") {
				t.Errorf("%s (checker %q) has no README row", code, c.Name)
			}
		}
	}
}
