package nicinfo

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/nicdiag/nicdiag/option"
)

// countingSource answers from a snapshot's files and counts what was
// asked, per interface; busInfo overrides the driver info's bus.
type countingSource struct {
	src     EthtoolSource
	busInfo map[string]string
	mu      sync.Mutex
	full    map[string]int
	drv     map[string]int
}

func (c *countingSource) Answers(ctx context.Context, iface string) (*EthtoolAnswers, error) {
	c.mu.Lock()
	c.full[iface]++
	c.mu.Unlock()
	a, err := c.src.Answers(ctx, iface)
	if err == nil && c.busInfo[iface] != "" {
		a.BusInfo = c.busInfo[iface]
	}
	return a, err
}

func (c *countingSource) DriverInfo(ctx context.Context, iface string) (*EthtoolAnswers, error) {
	c.mu.Lock()
	c.drv[iface]++
	c.mu.Unlock()
	a, err := c.src.Answers(ctx, iface)
	if err != nil {
		return nil, err
	}
	a = a.driverInfo()
	if c.busInfo[iface] != "" {
		a.BusInfo = c.busInfo[iface]
	}
	return a, nil
}

func newCounting(dir string, bus map[string]string) *countingSource {
	return &countingSource{src: EthtoolFiles(dir), busInfo: bus, full: map[string]int{}, drv: map[string]int{}}
}

// TestSoftwareBrief: with WithSoftwareBrief a software interface is asked
// its driver info only and says so in Missing; the physical NIC reads
// exactly as without it; a software interface whose driver info names a
// PCI function is read in full.
func TestSoftwareBrief(t *testing.T) {
	dir := needSnap(t, "firecracker-virtio-vm")
	ctx := context.Background()
	full, err := List(ctx, option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	src := newCounting(dir, nil)
	brief, err := List(ctx, option.Root(dir), WithSoftwareBrief(), WithEthtool(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(full) != len(brief) || len(brief) != 4 {
		t.Fatalf("%d NICs in full, %d in brief; want 4", len(full), len(brief))
	}
	for i, n := range brief {
		switch n.Name {
		case "eth0":
			if !reflect.DeepEqual(n, full[i]) {
				t.Errorf("eth0 differs in brief:\n%+v\n%+v", n, full[i])
			}
			if src.full["eth0"] != 1 || src.drv["eth0"] != 0 {
				t.Errorf("eth0 asked %d full, %d driver info; want 1, 0", src.full["eth0"], src.drv["eth0"])
			}
		default:
			if !slices.Contains(n.Missing, briefMissing) || slices.Contains(full[i].Missing, briefMissing) {
				t.Errorf("%s Missing brief %q, full %q", n.Name, n.Missing, full[i].Missing)
			}
			if src.full[n.Name] != 0 || src.drv[n.Name] != 1 {
				t.Errorf("%s asked %d full, %d driver info; want 0, 1", n.Name, src.full[n.Name], src.drv[n.Name])
			}
			if n.Driver != full[i].Driver || n.Name == "ifb0" && n.Driver != "ifb" {
				t.Errorf("%s driver %q in brief, %q in full", n.Name, n.Driver, full[i].Driver)
			}
		}
	}

	// A driver that set no device link but names its PCI function.
	src = newCounting(dir, map[string]string{"ifb1": "0000:00:05.0"})
	brief, err = List(ctx, option.Root(dir), WithSoftwareBrief(), WithEthtool(src))
	if err != nil {
		t.Fatal(err)
	}
	if src.full["ifb1"] != 1 || src.drv["ifb1"] != 1 {
		t.Errorf("ifb1 naming a PCI function asked %d full, %d driver info; want 1, 1", src.full["ifb1"], src.drv["ifb1"])
	}
	for _, n := range brief {
		if n.Name == "ifb1" && slices.Contains(n.Missing, briefMissing) {
			t.Errorf("ifb1 read in full still says %q", briefMissing)
		}
	}

	// A source without DriverInfo (the snapshot's own) is trimmed to it.
	brief, err = List(ctx, option.Root(dir), WithSoftwareBrief())
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range brief {
		if n.Name != "eth0" && (!slices.Contains(n.Missing, briefMissing) || n.Driver != full[i].Driver) {
			t.Errorf("%s from the snapshot's files: Missing %q, driver %q", n.Name, n.Missing, n.Driver)
		}
	}
}

// TestSoftwareBriefLive: the host's loopback, asked in brief, gets its
// driver info only (one ETHTOOL_GDRVINFO); in full, its offloads too.
func TestSoftwareBriefLive(t *testing.T) {
	ctx := context.Background()
	full, err := Get(ctx, "lo")
	if err != nil {
		t.Skip("no lo here:", err)
	}
	brief, err := Get(ctx, "lo", WithSoftwareBrief())
	if err != nil {
		t.Fatal(err)
	}
	if full.Bus != BusVirtual || len(full.Features) == 0 || slices.Contains(full.Missing, briefMissing) {
		t.Fatalf("lo in full: bus %s, features %v, missing %q", full.Bus, full.Features, full.Missing)
	}
	if len(brief.Features) != 0 || brief.Queues.Channels != nil || !slices.Contains(brief.Missing, briefMissing) {
		t.Errorf("lo in brief: features %v, channels %v, missing %q", brief.Features, brief.Queues.Channels, brief.Missing)
	}
	if brief.MTU != full.MTU || brief.Index != full.Index {
		t.Errorf("lo's sysfs attributes differ in brief: %+v vs %+v", brief, full)
	}
}
