package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The QEMU tests boot guests (seconds each, root needed); they run only with
// NICDIAG_LAB=1. The parser tests below them always run.
const labSwitch = "NICDIAG_LAB"

var (
	// Set by TestMain from the environment: the harness itself reads none.
	labOn   bool    // NICDIAG_LAB=1
	harness Harness // on cacheDirFromEnv()

	setupOnce sync.Once
	nicdiag   string // static binary injected into every guest
	setupErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	labOn = os.Getenv(labSwitch) == "1"
	harness = Harness{CacheDir: cacheDirFromEnv()}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// cacheDirFromEnv is the cache that build.sh and run.sh pick when run by
// hand: $NICDIAG_LAB_CACHE, else $XDG_CACHE_HOME/nicdiag-lab, else
// /var/tmp/nicdiag-lab.
func cacheDirFromEnv() string {
	if d := os.Getenv("NICDIAG_LAB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "nicdiag-lab")
	}
	return "/var/tmp/nicdiag-lab"
}

// needLab skips unless NICDIAG_LAB=1, then makes sure the guest image and a
// static nicdiag exist (building either the first time).
func needLab(t *testing.T) string {
	t.Helper()
	if !labOn {
		t.Skipf("QEMU lab test: set %s=1 to run (needs root; builds the guest into %s on first use, see internal/lab/README.md)", labSwitch, harness.CacheDir)
	}
	setupOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		start := time.Now()
		if !harness.Built() {
			var log strings.Builder
			if setupErr = harness.EnsureBuilt(ctx, &log); setupErr != nil {
				setupErr = fmt.Errorf("%w\n%s", setupErr, log.String())
				return
			}
			fmt.Fprintf(os.Stderr, "lab: built the guest in %s (%.1fs)\n", harness.CacheDir, time.Since(start).Seconds())
		}
		if binDir, setupErr = os.MkdirTemp("", "nicdiag-lab-bin"); setupErr != nil {
			return
		}
		nicdiag, setupErr = BuildNicdiag(ctx, binDir)
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return nicdiag
}

// boot runs the guest script internal/lab/scripts/NAME.sh on topology NAME
// with the static nicdiag injected, and returns the script's sections.
func boot(t *testing.T, topo string) map[string]Section {
	t.Helper()
	secs, info, err := runBoot(needLab(t), topo)
	if info != "" {
		t.Log(info)
	}
	if err != nil {
		t.Fatal(err)
	}
	return secs
}

// runBoot is boot without a test: the sections, a line about the boot's
// times, and why it failed.
func runBoot(bin, topo string) (map[string]Section, string, error) {
	script, err := os.ReadFile(filepath.Join(Dir(), "scripts", topo+".sh"))
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	res, err := harness.Run(ctx, Config{Topology: topo, Script: string(script), Files: []string{bin}, Timeout: 5 * time.Minute})
	if err != nil {
		return nil, "", fmt.Errorf("boot %s: %v\noutput:\n%s", topo, err, res.Output)
	}
	info := fmt.Sprintf("topology %s: boot-to-script %.2fs (guest uptime %.2fs), total %.2fs", topo, res.BootSeconds, res.GuestUptime, res.TotalSeconds)
	if res.ExitStatus != 0 {
		return nil, info, fmt.Errorf("guest script exited %d:\n%s", res.ExitStatus, res.Output)
	}
	secs := Sections(res.Output)
	if len(secs) == 0 {
		return nil, info, fmt.Errorf("no sections in the guest's output:\n%s", res.Output)
	}
	return secs, info, nil
}

// Boots that several tests read (one boot instead of one per test: each
// costs 20-60 s), by topology.
var (
	sharedMu    sync.Mutex
	sharedBoots = map[string]*sharedBoot{}
)

type sharedBoot struct {
	secs  map[string]Section
	info  string
	err   error
	taken map[string]bool // tests that have read it
}

// bootShared is boot for topologies whose script serves several tests: the
// first test to ask boots, the others read the same sections (and failure).
// A test that asks again (go test -count=N) gets a fresh boot.
func bootShared(t *testing.T, topo string) map[string]Section {
	t.Helper()
	bin := needLab(t)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	b := sharedBoots[topo]
	if b == nil || b.taken[t.Name()] {
		b = &sharedBoot{taken: map[string]bool{}}
		b.secs, b.info, b.err = runBoot(bin, topo)
		sharedBoots[topo] = b
	} else {
		b.info += " (boot shared with an earlier test)"
	}
	b.taken[t.Name()] = true
	if b.info != "" {
		t.Log(b.info)
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.secs
}

// sec returns the named section or fails the test.
func sec(t *testing.T, secs map[string]Section, name string) Section {
	t.Helper()
	s, ok := secs[name]
	if !ok {
		t.Fatalf("guest printed no section %q", name)
	}
	return s
}

// nicdiagJSON decodes the stdout of a nicdiag section into v, failing the
// test when nicdiag failed (exit 3) or printed no JSON.
func nicdiagJSON(t *testing.T, s Section, v any) {
	t.Helper()
	if s.RC == 3 || s.RC > 3 {
		t.Fatalf("%s: nicdiag exited %d\nstderr: %s\nstdout: %s", s.Name, s.RC, s.Stderr, s.Stdout)
	}
	if err := json.Unmarshal([]byte(s.Stdout), v); err != nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", s.Name, err, s.Stdout, s.Stderr)
	}
}

func factsOf(t *testing.T, s Section) []NetFact {
	t.Helper()
	f, err := ParseNetFacts(s.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The JSON contract of `nicdiag list --json`: a document with "schema":
// "nicdiag/v1" (README.md, "Commands") whose "nics" are nicinfo.NIC values
// under their JSON tags (nicinfo/nic.go). The fields the tests hold against
// sysfs are written out here, so that a change of the contract fails them.
type listDoc struct {
	Schema string    `json:"schema"`
	NICs   []nicJSON `json:"nics"`
}

type nicJSON struct {
	Name   string   `json:"name"`
	Bus    string   `json:"bus"`
	Driver string   `json:"driver"`
	PCI    *pciJSON `json:"pci"`
	Queues struct {
		RX int `json:"rx"`
		TX int `json:"tx"`
	} `json:"queues"`
	Features map[string]struct {
		Active bool `json:"active"`
		Fixed  bool `json:"fixed"`
	} `json:"features"`
	Coalesce *struct {
		RXUsecs *uint32 `json:"rx_usecs"`
		Source  string  `json:"source"`
	} `json:"coalesce"`
}

type pciJSON struct {
	Address  string    `json:"address"`
	VendorID uint16    `json:"vendor_id"`
	DeviceID uint16    `json:"device_id"`
	Driver   string    `json:"driver"`
	IRQs     []int     `json:"irqs"`
	PhysFn   string    `json:"physfn"`
	VFs      []string  `json:"vfs"`
	TotalVFs int       `json:"sriov_totalvfs"`
	Link     *linkJSON `json:"pcie_link"`
}

type linkJSON struct {
	CurrentSpeed float64 `json:"current_speed_gts"`
	CurrentWidth int     `json:"current_width"`
	MaxSpeed     float64 `json:"max_speed_gts"`
	MaxWidth     int     `json:"max_width"`
}

type findingJSON struct {
	Code     string            `json:"code"`
	Severity string            `json:"severity"`
	Subject  string            `json:"subject"`
	Summary  string            `json:"summary"`
	Evidence map[string]string `json:"evidence"`
}

type checkDoc struct {
	Schema   string        `json:"schema"`
	Findings []findingJSON `json:"findings"`
}

// finding returns the finding with code about subject, or nil.
func (d checkDoc) finding(code, subject string) *findingJSON {
	for i := range d.Findings {
		if d.Findings[i].Code == code && d.Findings[i].Subject == subject {
			return &d.Findings[i]
		}
	}
	return nil
}

func (d listDoc) nic(name string) *nicJSON {
	for i := range d.NICs {
		if d.NICs[i].Name == name {
			return &d.NICs[i]
		}
	}
	return nil
}

func decodeList(t *testing.T, s Section) listDoc {
	t.Helper()
	var d listDoc
	nicdiagJSON(t, s, &d)
	if d.Schema != "nicdiag/v1" {
		t.Errorf("%s: schema %q, want nicdiag/v1", s.Name, d.Schema)
	}
	return d
}

// checkAgainstFacts holds every netdev nicdiag listed against sysfs: joined
// to its PCI function, both drivers, IDs, IRQs, link attributes, SR-IOV ties.
func checkAgainstFacts(t *testing.T, d listDoc, facts []NetFact) {
	t.Helper()
	for _, f := range facts {
		n := d.nic(f.Name)
		if n == nil {
			t.Errorf("%s: not in nicdiag list --all", f.Name)
			continue
		}
		if f.Function == "none" {
			continue
		}
		if n.Bus != "pci" {
			t.Errorf("%s: bus %q, want pci", f.Name, n.Bus)
		}
		if n.PCI == nil {
			t.Errorf("%s: no pci object, want function %s", f.Name, f.Function)
			continue
		}
		p := n.PCI
		if p.Address != f.Function {
			t.Errorf("%s: pci.address %q, want %q", f.Name, p.Address, f.Function)
		}
		if p.Driver != f.PCIDriver {
			t.Errorf("%s: pci.driver %q, want %q", f.Name, p.Driver, f.PCIDriver)
		}
		if n.Driver != f.NetDriver {
			t.Errorf("%s: driver %q, want %q", f.Name, n.Driver, f.NetDriver)
		}
		if p.VendorID != f.VendorID || p.DeviceID != f.DeviceID {
			t.Errorf("%s: ID %04x:%04x, want %04x:%04x", f.Name, p.VendorID, p.DeviceID, f.VendorID, f.DeviceID)
		}
		wantIRQs := f.MSI
		if len(wantIRQs) == 0 && f.IRQ > 0 {
			wantIRQs = []int{f.IRQ}
		}
		got := slices.Sorted(slices.Values(p.IRQs))
		if !slices.Equal(got, wantIRQs) {
			t.Errorf("%s: pci.irqs %v, want %v (msi_irqs, else irq)", f.Name, got, wantIRQs)
		}
		switch {
		case f.Link == nil && p.Link != nil:
			t.Errorf("%s: pcie_link %+v, but the function has no link attributes (conventional PCI)", f.Name, *p.Link)
		case f.Link != nil && p.Link == nil:
			t.Errorf("%s: no pcie_link, sysfs has %+v", f.Name, *f.Link)
		case f.Link != nil:
			want := linkJSON{f.Link.CurrentSpeed, f.Link.CurrentWidth, f.Link.MaxSpeed, f.Link.MaxWidth}
			if *p.Link != want {
				t.Errorf("%s: pcie_link %+v, want %+v", f.Name, *p.Link, want)
			}
		}
		if p.PhysFn != f.PhysFn {
			t.Errorf("%s: pci.physfn %q, want %q", f.Name, p.PhysFn, f.PhysFn)
		}
		if vfs := slices.Sorted(slices.Values(p.VFs)); !slices.Equal(vfs, f.VFs) {
			t.Errorf("%s: pci.vfs %v, want %v", f.Name, vfs, f.VFs)
		}
		if p.TotalVFs != f.TotalVFs {
			t.Errorf("%s: pci.sriov_totalvfs %d, want %d", f.Name, p.TotalVFs, f.TotalVFs)
		}
	}
}

// TestLinks: e1000e behind a 2.5 GT/s x1 port, virtio-net (4 queue pairs)
// behind an 8 GT/s x4 port, vmxnet3 behind a 16 GT/s x16 port, e1000 on the
// root bus.
func TestLinks(t *testing.T) {
	secs := boot(t, "links")
	facts := factsOf(t, sec(t, secs, "facts"))

	byFn := linksTopology(t, facts)

	t.Run("list", func(t *testing.T) {
		d := decodeList(t, sec(t, secs, "list"))
		checkAgainstFacts(t, d, facts)
		if n := d.nic(byFn["0000:00:13.0"].Name); n != nil && n.PCI != nil && n.PCI.Link != nil {
			t.Errorf("e1000 on the root bus (conventional PCI) reported with a PCIe link %+v", *n.PCI.Link)
		}
		// virtio: the netdev's device is virtioN, the PCI function its parent.
		if n := d.nic(byFn["0000:02:00.0"].Name); n != nil && n.Queues.RX < 2 {
			t.Errorf("virtio-net with 4 queue pairs: queues.rx %d", n.Queues.RX)
		}
	})

	t.Run("list-text", func(t *testing.T) {
		lt := sec(t, secs, "list-text")
		if lt.RC != 0 {
			t.Fatalf("nicdiag list --all exited %d: %s", lt.RC, lt.Stderr)
		}
		for _, f := range facts {
			if !strings.Contains(lt.Stdout, f.Name) || !strings.Contains(lt.Stdout, strings.TrimPrefix(f.Function, "0000:")) {
				t.Errorf("nicdiag list --all does not mention %s at %s:\n%s", f.Name, f.Function, lt.Stdout)
			}
		}
	})

	// Every endpoint is itself the 2.5 GT/s x1 part and trained at that; the
	// ports that advertise 8 GT/s x4 and 16 GT/s x16 do not make the link
	// downgraded, the slot is not what limits, and 1 GbE fits 2.5 GT/s x1.
	t.Run("check", func(t *testing.T) {
		var c checkDoc
		cs := sec(t, secs, "check")
		nicdiagJSON(t, cs, &c)
		for _, f := range c.Findings {
			switch f.Code {
			case "pcie.link_downgraded", "pcie.bottleneck", "pcie.slot_limited":
				t.Errorf("check: %s %s on %s: %s (evidence %v)", f.Severity, f.Code, f.Subject, f.Summary, f.Evidence)
			}
		}
		if cs.RC != exitFor(c.Findings) {
			t.Errorf("check exited %d; its findings call for %d", cs.RC, exitFor(c.Findings))
		}
	})

	// The guest is a QEMU VM (DMI, CPU flag): QEMU's e1000 and e1000e are
	// nic.emulated, vmxnet3 and virtio are not. The virtio device without
	// mq lacks VIRTIO_NET_F_MQ (bit 22 of its features) and is
	// nic.virtio_single_queue, with no nic.single_queue beside it; the
	// mq=on one has the bit and neither.
	t.Run("virtual", func(t *testing.T) { checkLinksVirtual(t, secs, byFn) })

	t.Run("show", func(t *testing.T) {
		for _, f := range facts {
			var v map[string]any
			nicdiagJSON(t, sec(t, secs, "show-"+f.Name), &v)
		}
	})

	// The budget on emulated and paravirtual NICs: QEMU's e1000e (on a
	// QEMU guest, by its subsystem 8086:0000 and the DMI names) and e1000
	// are emulated, their links and speeds nominal, and virtio's speed is
	// nominal too: nothing physical is known to bound them. explain says
	// so (exit 0, bound none, the reason in no_pcie), with no ceiling from
	// the nominal 1000 Mb/s.
	t.Run("explain", func(t *testing.T) { checkLinksExplain(t, secs, byFn) })
	t.Run("aer", func(t *testing.T) { checkAER(t, secs, byFn) })
	t.Run("audit", func(t *testing.T) { checkAudit(t, secs) })
}

// linksTopology checks the topology itself, so that a changed QEMU or kernel
// shows up here rather than as a puzzling nicdiag failure, and returns the
// guest's netdevs by PCI function.
func linksTopology(t *testing.T, facts []NetFact) map[string]NetFact {
	t.Helper()
	want := map[string]struct {
		id             [2]uint16
		pciDrv, netDrv string
		link           bool
	}{
		"0000:01:00.0": {[2]uint16{0x8086, 0x10d3}, "e1000e", "e1000e", true},
		"0000:02:00.0": {[2]uint16{0x1af4, 0x1041}, "virtio-pci", "virtio_net", true},
		"0000:03:00.0": {[2]uint16{0x15ad, 0x07b0}, "vmxnet3", "vmxnet3", true},
		"0000:00:13.0": {[2]uint16{0x8086, 0x100e}, "e1000", "e1000", false},
		"0000:00:14.0": {[2]uint16{0x1af4, 0x1000}, "virtio-pci", "virtio_net", false},
	}
	byFn := map[string]NetFact{}
	for _, f := range facts {
		byFn[f.Function] = f
	}
	for fn, w := range want {
		f, ok := byFn[fn]
		if !ok {
			t.Fatalf("guest has no netdev on %s; facts: %+v", fn, facts)
		}
		if f.VendorID != w.id[0] || f.DeviceID != w.id[1] || f.PCIDriver != w.pciDrv || f.NetDriver != w.netDrv || (f.Link != nil) != w.link {
			t.Fatalf("guest's %s is %+v, topology expects %+v", fn, f, w)
		}
		if f.Link != nil && (f.Link.CurrentSpeed != 2.5 || f.Link.CurrentWidth != 1 || f.Link.MaxSpeed != 2.5 || f.Link.MaxWidth != 1) {
			t.Fatalf("guest's %s link %+v; every emulated endpoint should be 2.5 GT/s x1", fn, *f.Link)
		}
	}
	return byFn
}

// checkLinksVirtual: TestLinks's virtual-NIC findings (see there).
func checkLinksVirtual(t *testing.T, secs map[string]Section, byFn map[string]NetFact) {
	t.Helper()
	plat := strings.Fields(sec(t, secs, "platform").Stdout)
	if len(plat) != 3 || plat[0] != "QEMU" || plat[2] != "hypervisor" {
		t.Fatalf("guest platform %q: want sys_vendor QEMU, a CPU count, the hypervisor flag", plat)
	}
	mq := map[string]byte{}
	for _, l := range strings.Split(sec(t, secs, "virtio").Stdout, "\n") {
		if fn, bits, ok := strings.Cut(strings.TrimSpace(l), " "); ok && len(bits) > 22 {
			mq[fn] = bits[22]
		}
	}
	if mq["0000:00:14.0"] != '0' || mq["0000:02:00.0"] != '1' {
		t.Fatalf("VIRTIO_NET_F_MQ by function %q: the topology expects 00:14.0 without, 02:00.0 with", mq)
	}
	var c checkDoc
	nicdiagJSON(t, sec(t, secs, "check"), &c)
	got := map[string]findingJSON{}
	for _, f := range c.Findings {
		got[f.Code+" "+f.Subject] = f
	}
	name := func(fn string) string { return byFn[fn].Name }
	for _, fn := range []string{"0000:00:13.0", "0000:01:00.0"} {
		f, ok := got["nic.emulated "+name(fn)]
		if !ok || f.Severity != "warn" || f.Evidence["hypervisor"] != "QEMU" || f.Evidence["paravirtual"] != "virtio-net" {
			t.Errorf("%s (%s): nic.emulated %+v (present %v), want warn on QEMU with virtio-net", name(fn), fn, f, ok)
		}
	}
	for _, fn := range []string{"0000:02:00.0", "0000:03:00.0", "0000:00:14.0"} {
		if f, ok := got["nic.emulated "+name(fn)]; ok {
			t.Errorf("%s (%s) is paravirtual: %+v", name(fn), fn, f)
		}
	}
	sq := name("0000:00:14.0")
	f, ok := got["nic.virtio_single_queue "+sq]
	if !ok || f.Severity != "warn" || f.Evidence["virtio_mq"] != "not offered" || f.Evidence["vcpus"] != plat[1] {
		t.Errorf("%s: nic.virtio_single_queue %+v (present %v), want warn, MQ not offered, %s vCPUs", sq, f, ok, plat[1])
	}
	if f, ok := got["nic.single_queue "+sq]; ok {
		t.Errorf("%s: nic.single_queue beside the virtio verdict: %+v", sq, f)
	}
	mqn := name("0000:02:00.0")
	for _, code := range []string{"nic.virtio_single_queue", "nic.single_queue"} {
		if f, ok := got[code+" "+mqn]; ok {
			t.Errorf("%s (mq=on, 4 pairs): %+v", mqn, f)
		}
	}
}

// checkLinksExplain: TestLinks's explain on emulated and paravirtual NICs
// (see there).
func checkLinksExplain(t *testing.T, secs map[string]Section, byFn map[string]NetFact) {
	t.Helper()
	for _, fn := range []string{"0000:01:00.0", "0000:00:13.0", "0000:02:00.0", "0000:03:00.0"} {
		s := sec(t, secs, "explain-"+byFn[fn].Name)
		var nb struct {
			Bound   string             `json:"bound"`
			NoPCIe  string             `json:"no_pcie"`
			Ceiling map[string]float64 `json:"ceiling_mbps"`
		}
		if s.RC != 0 || json.Unmarshal([]byte(s.Stdout), &nb) != nil || nb.Bound != "none" || nb.NoPCIe == "" || nb.Ceiling["nominal"] != 0 {
			t.Errorf("explain %s (%s): exit %d, %+v, stderr %q; want exit 0, bound none with the reason, no ceiling", byFn[fn].Name, fn, s.RC, nb, s.Stderr)
		}
	}
}

// exitFor is the exit status README.md gives `check` for a set of findings:
// 0 when nothing is at warn or above, 1 for a warning, 2 for an error (3, for
// nicdiag itself failing, never comes from findings).
func exitFor(fs []findingJSON) int {
	code := 0
	for _, f := range fs {
		switch f.Severity {
		case "warn":
			code = max(code, 1)
		case "error":
			code = 2
		}
	}
	return code
}

// TestIGB: the 82576 with its MSI-X queue vectors, then two SR-IOV VFs.
func TestIGB(t *testing.T) {
	secs := boot(t, "igb")
	facts0 := factsOf(t, sec(t, secs, "facts0"))
	if len(facts0) != 1 || facts0[0].Function != "0000:01:00.0" || facts0[0].PCIDriver != "igb" {
		t.Fatalf("guest before SR-IOV: %+v, want one igb on 0000:01:00.0", facts0)
	}
	pf := facts0[0]

	t.Run("identity", func(t *testing.T) {
		d0 := decodeList(t, sec(t, secs, "list0"))
		checkAgainstFacts(t, d0, facts0)
		n := d0.nic(pf.Name)
		if n == nil || n.PCI == nil {
			t.Fatalf("list has no PCI NIC %s", pf.Name)
		}
		if n.Driver != "igb" || n.PCI.Driver != "igb" || n.PCI.VendorID != 0x8086 || n.PCI.DeviceID != 0x10c9 {
			t.Errorf("igb identity: driver %q/%q, ID %04x:%04x; want igb/igb 8086:10c9", n.Driver, n.PCI.Driver, n.PCI.VendorID, n.PCI.DeviceID)
		}
		if n.PCI.TotalVFs != pf.TotalVFs || pf.TotalVFs == 0 {
			t.Errorf("igb: sriov_totalvfs %d, sysfs %d", n.PCI.TotalVFs, pf.TotalVFs)
		}
	})

	// The kernel's queue vectors (6.1 names the chip "PCI-MSI <hwirq>-edge",
	// so only msi_irqs ties them to the function): IRQ -> queue.
	wantQ := igbQueueIRQs(t, secs, pf)
	// nicdiag's mapping of them to queues, in monitor's per-queue samples
	// and in show.
	t.Run("monitor-queues", func(t *testing.T) {
		var all []queueObj
		for _, l := range jsonLines(t, sec(t, secs, "monitor0")) {
			all = append(all, queueObjects(l)...)
		}
		checkQueues(t, all, wantQ)
	})
	t.Run("show-queues", func(t *testing.T) {
		var show map[string]any
		nicdiagJSON(t, sec(t, secs, "show0"), &show)
		q := queueObjects(show)
		if len(q) == 0 {
			// Nothing in the JSON contract (README.md, "Commands")
			// promises that show's document carries the IRQ map.
			t.Skip("show --json has no queue IRQs; monitor-queues covers the mapping")
		}
		checkQueues(t, q, wantQ)
	})

	// ethtool -G eth0 rx 80, then back to 256 (rings_test.go).
	t.Run("rings", func(t *testing.T) { checkRings(t, secs) })
	// GRO off and rx-usecs 0 (ethtool in the guest): nicdiag reads what
	// ethtool -k / -c show and judges both (info: the emulated 82576's
	// 1000 Mb/s is nominal and below 10 Gb/s); put back, both go.
	t.Run("offloads-coalesce", func(t *testing.T) { checkIGBOffloads(t, secs, pf) })

	// EEE, pause, the partner's modes and the carrier counters
	// (ethlink_test.go).
	t.Run("ethlink", func(t *testing.T) { checkEthlink(t, secs) })

	// Two VFs through sriov_numvfs, bound to igbvf and tied to the PF.
	t.Run("sriov", func(t *testing.T) { checkIGBSRIOV(t, secs, pf) })

	// `ip link set eth0 vf 0 max_tx_rate 100`: nic.vf_rate_limited on VF 0
	// (01:10.0), a warning against its 1000 Mb/s link, live and from a
	// snapshot of the same state; gone once the cap is 0.
	t.Run("vf-rate", func(t *testing.T) { checkIGBVFRate(t, secs, pf) })
}

// checkIGBOffloads: GRO off and rx-usecs 0 on the PF, judged, then put back
// (TestIGB's offloads-coalesce).
func checkIGBOffloads(t *testing.T, secs map[string]Section, pf NetFact) {
	t.Helper()
	if s := sec(t, secs, "offl-set"); s.RC != 0 {
		t.Fatalf("ethtool in the guest failed (%d): %s", s.RC, s.Stderr)
	}
	k, c := sec(t, secs, "offl-k").Stdout, sec(t, secs, "offl-c").Stdout
	if !strings.Contains(k, "generic-receive-offload: off") || !regexp.MustCompile(`(?m)^rx-usecs:\s+0$`).MatchString(c) {
		t.Fatalf("the driver did not take the settings:\n%s\n%s", k, c)
	}
	n := decodeList(t, sec(t, secs, "offl-list")).nic(pf.Name)
	if n == nil {
		t.Fatalf("list has no %s", pf.Name)
	}
	if g, ok := n.Features["rx-gro"]; !ok || g.Active || g.Fixed {
		t.Errorf("rx-gro %+v (present %v), ethtool -k says off and changeable", g, ok)
	}
	if tso, ok := n.Features["tx-tcp-segmentation"]; !ok || tso.Active != strings.Contains(k, "tcp-segmentation-offload: on") {
		t.Errorf("tx-tcp-segmentation %+v; ethtool -k:\n%s", tso, k)
	}
	if n.Coalesce == nil || n.Coalesce.RXUsecs == nil || *n.Coalesce.RXUsecs != 0 || n.Coalesce.Source != "netlink" {
		t.Errorf("coalesce %+v, ethtool -c says rx-usecs 0", n.Coalesce)
	}
	var during, after checkDoc
	nicdiagJSON(t, sec(t, secs, "offl-check"), &during)
	for code, ev := range map[string]map[string]string{
		"nic.offload_off":  {"offloads_off": "rx-gro", "rx-gro": "off", "link_mbps": "1000", "label": "emulated"},
		"nic.coalesce_off": {"rx_usecs": "0", "source": "netlink", "link_mbps": "1000", "adaptive_rx": "not supported"},
	} {
		f := during.finding(code, pf.Name)
		if f == nil {
			t.Errorf("no %s for %s in %+v", code, pf.Name, during.Findings)
			continue
		}
		t.Logf("%s %s: %s", f.Severity, code, f.Summary)
		if f.Severity != "info" {
			t.Errorf("%s: severity %s, want info at a nominal 1000 Mb/s", code, f.Severity)
		}
		for k, v := range ev {
			if f.Evidence[k] != v {
				t.Errorf("%s: evidence %s = %q, want %q (%v)", code, k, f.Evidence[k], v, f.Evidence)
			}
		}
	}
	if s := sec(t, secs, "offl-undo"); s.RC != 0 {
		t.Fatalf("undo failed (%d): %s", s.RC, s.Stderr)
	}
	nicdiagJSON(t, sec(t, secs, "offl-after"), &after)
	for _, code := range []string{"nic.offload_off", "nic.coalesce_off"} {
		if f := after.finding(code, pf.Name); f != nil {
			t.Errorf("after undoing: %+v", f)
		}
	}
}

// checkIGBSRIOV: two VFs through sriov_numvfs, bound to igbvf and tied to
// the PF (TestIGB's sriov).
func checkIGBSRIOV(t *testing.T, secs map[string]Section, pf NetFact) {
	t.Helper()
	facts1 := factsOf(t, sec(t, secs, "facts1"))
	var vfs []NetFact
	for _, f := range facts1 {
		if f.PhysFn != "" {
			vfs = append(vfs, f)
		}
	}
	if len(vfs) != 2 {
		t.Fatalf("guest after sriov_numvfs=2: %+v, want 2 VF netdevs", facts1)
	}
	d1 := decodeList(t, sec(t, secs, "list1"))
	checkAgainstFacts(t, d1, facts1)
	var vfAddrs []string
	for _, vf := range vfs {
		vfAddrs = append(vfAddrs, vf.Function)
		n := d1.nic(vf.Name)
		if n == nil || n.PCI == nil {
			continue // reported by checkAgainstFacts
		}
		if n.Driver != "igbvf" || n.PCI.Driver != "igbvf" || n.PCI.VendorID != 0x8086 || n.PCI.DeviceID != 0x10ca {
			t.Errorf("VF %s: driver %q pci.driver %q ID %04x:%04x; want igbvf, igbvf, 8086:10ca", vf.Name, n.Driver, n.PCI.Driver, n.PCI.VendorID, n.PCI.DeviceID)
		}
		if n.PCI.PhysFn != pf.Function {
			t.Errorf("VF %s: physfn %q, want %s", vf.Name, n.PCI.PhysFn, pf.Function)
		}
	}
	slices.Sort(vfAddrs)
	if p := d1.nic(pf.Name); p != nil && p.PCI != nil {
		if got := slices.Sorted(slices.Values(p.PCI.VFs)); !slices.Equal(got, vfAddrs) {
			t.Errorf("PF %s: vfs %v, want %v", pf.Name, got, vfAddrs)
		}
	}
	var c checkDoc
	nicdiagJSON(t, sec(t, secs, "check1"), &c)
	// igbvf has one queue pair by design: no nic.single_queue.
	for _, f := range c.Findings {
		for _, vf := range vfs {
			if f.Code == "nic.single_queue" && f.Subject == vf.Name {
				t.Errorf("VF %s: %s %s", vf.Name, f.Code, f.Summary)
			}
		}
	}
}

// checkIGBVFRate: nic.vf_rate_limited on VF 0 under max_tx_rate 100, live
// and from a snapshot, gone at 0 (TestIGB's vf-rate).
func checkIGBVFRate(t *testing.T, secs map[string]Section, pf NetFact) {
	t.Helper()
	if s := sec(t, secs, "setrate"); s.RC != 0 {
		t.Fatalf("ip link set eth0 vf 0 max_tx_rate 100: exit %d: %s", s.RC, s.Stderr)
	}
	if s := sec(t, secs, "iplink2").Stdout; !strings.Contains(s, "max_tx_rate 100Mbps") {
		t.Fatalf("the kernel does not report the cap: %s", s)
	}
	var vf0 string
	for _, f := range factsOf(t, sec(t, secs, "facts1")) {
		if f.Function == "0000:01:10.0" {
			vf0 = f.Name
		}
	}
	if vf0 == "" {
		t.Fatal("no netdev on VF 0 (0000:01:10.0)")
	}
	rate := func(name string) []findingJSON {
		var c checkDoc
		nicdiagJSON(t, sec(t, secs, name), &c)
		var out []findingJSON
		for _, f := range c.Findings {
			if f.Code == "nic.vf_rate_limited" {
				out = append(out, f)
			}
		}
		return out
	}
	live, snap := rate("check2"), rate("snapcheck2")
	if len(live) != 1 || live[0].Subject != vf0 || live[0].Severity != "warn" || live[0].Evidence["max_tx_rate_mbps"] != "100" ||
		live[0].Evidence["function"] != "0000:01:10.0" || live[0].Evidence["pf"] != pf.Name {
		t.Errorf("live: %+v, want one warn on %s with max_tx_rate 100", live, vf0)
	}
	if len(snap) != len(live) || len(snap) == 1 && (snap[0].Summary != live[0].Summary || snap[0].Severity != live[0].Severity) {
		t.Errorf("snapshot of the same state: %+v, live %+v", snap, live)
	}
	if s := sec(t, secs, "unsetrate"); s.RC != 0 {
		t.Fatalf("max_tx_rate 0: exit %d: %s", s.RC, s.Stderr)
	}
	if got := rate("check3"); len(got) != 0 {
		t.Errorf("after max_tx_rate 0: %+v", got)
	}
	if len(live) == 1 {
		t.Logf("%s %s: %s", live[0].Severity, live[0].Subject, live[0].Summary)
	}
}

// igbQueueIRQs: the PF's rx and tx queue vectors in /proc/interrupts, each
// one of its msi_irqs: IRQ -> queue.
func igbQueueIRQs(t *testing.T, secs map[string]Section, pf NetFact) map[int]queue {
	t.Helper()
	wantQ := map[int]queue{}
	irqs := ParseInterrupts(sec(t, secs, "interrupts0").Stdout)
	for _, kind := range []string{"rx", "tx"} {
		for i := 0; i < 2; i++ {
			name := fmt.Sprintf("%s-%s-%d", pf.Name, kind, i)
			r, ok := irqs[name]
			if !ok {
				t.Fatalf("/proc/interrupts has no %s:\n%s", name, sec(t, secs, "interrupts0").Stdout)
			}
			if !slices.Contains(pf.MSI, r.IRQ) {
				t.Fatalf("%s is IRQ %d, not in msi_irqs %v", name, r.IRQ, pf.MSI)
			}
			wantQ[r.IRQ] = queue{kind, i}
		}
	}
	return wantQ
}

type queue struct {
	kind string
	idx  int
}

// checkQueues requires every IRQ of want among got, mapped to that queue.
func checkQueues(t *testing.T, got []queueObj, want map[int]queue) {
	t.Helper()
	m := map[int]queue{}
	for _, o := range got {
		m[o.IRQ] = queue{o.Kind, o.Index}
	}
	for irq, w := range want {
		if g, ok := m[irq]; !ok || g != w {
			t.Errorf("IRQ %d: mapped to %+v (present %v), want queue %s-%d; all: %+v", irq, g, ok, w.kind, w.idx, got)
		}
	}
}

// queueObj is irq.QueueIRQ's JSON, wherever a document holds it.
type queueObj struct {
	IRQ    int    `json:"irq"`
	Action string `json:"action"`
	Kind   string `json:"kind"`
	Index  int    `json:"index"`
}

// queueObjects finds every object in v shaped like irq.QueueIRQ (it has irq,
// action and kind): show and monitor embed them at different places.
func queueObjects(v any) []queueObj {
	var out []queueObj
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			_, a := x["irq"]
			_, b := x["action"]
			_, c := x["kind"]
			if a && b && c {
				raw, _ := json.Marshal(x)
				var q queueObj
				if json.Unmarshal(raw, &q) == nil {
					out = append(out, q)
				}
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	return out
}

// jsonLines decodes one JSON object per line (monitor --json).
func jsonLines(t *testing.T, s Section) []map[string]any {
	t.Helper()
	if s.RC >= 3 {
		t.Fatalf("%s: nicdiag exited %d\nstderr: %s\nstdout: %s", s.Name, s.RC, s.Stderr, s.Stdout)
	}
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s.Stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: line is not JSON: %v\n%s", s.Name, err, line)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no JSON lines\nstderr: %s", s.Name, s.Stderr)
	}
	return out
}

// TestTraffic: ICMP between two igb (one in a netns in the guest) while
// nicdiag monitor samples: the queue IRQs and NET_RX move on the CPUs that
// handle them, and `monitor -- CMD` ends with a verdict.
func TestTraffic(t *testing.T) {
	secs := bootShared(t, "traffic")
	bp := sec(t, secs, "bg-ping")
	sent, rcvd, err := pingCounts(bp.Stdout)
	if err != nil || rcvd < 200 || rcvd < sent-2 {
		t.Fatalf("traffic did not flow (%v): %s", err, bp.Stdout)
	}
	facts := factsOf(t, sec(t, secs, "facts"))
	if len(facts) != 1 || facts[0].PCIDriver != "igb" {
		t.Fatalf("root namespace should hold one igb: %+v", facts)
	}
	nic := facts[0].Name
	i0 := ParseInterrupts(sec(t, secs, "interrupts0").Stdout)
	i1 := ParseInterrupts(sec(t, secs, "interrupts1").Stdout)
	s0 := ParseSoftirqs(sec(t, secs, "softirqs0").Stdout)["NET_RX"]
	s1 := ParseSoftirqs(sec(t, secs, "softirqs1").Stdout)["NET_RX"]

	// Ground truth: the rx vector that took the pings (RSS puts the one
	// ICMP flow on one of igb's two rx queues) and the CPU that took it
	// during the window.
	rx, rxIdx, hot, most := "", -1, -1, uint64(0)
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s-rx-%d", nic, i)
		a, b := i0[name], i1[name]
		if b.IRQ == 0 {
			break
		}
		if len(a.PerCPU) != len(b.PerCPU) {
			t.Fatalf("%s: /proc/interrupts columns %d then %d", name, len(a.PerCPU), len(b.PerCPU))
		}
		for c := range b.PerCPU {
			if d := b.PerCPU[c] - a.PerCPU[c]; d > most {
				rx, rxIdx, hot, most = name, i, c, d
			}
		}
	}
	if rx == "" {
		t.Fatalf("no %s-rx-N vector moved in /proc/interrupts:\n%s", nic, sec(t, secs, "interrupts1").Stdout)
	}
	if most < 100 {
		t.Fatalf("%s moved by only %d during %d pings", rx, most, rcvd)
	}
	if len(s0) <= hot || s1[hot]-s0[hot] < most/2 {
		t.Fatalf("NET_RX on CPU%d moved %v -> %v while %s took %d there", hot, s0, s1, rx, most)
	}
	rxIRQ := i1[rx].IRQ
	t.Logf("%s (IRQ %d) landed on CPU%d: +%d; NET_RX there +%d", rx, rxIRQ, hot, most, s1[hot]-s0[hot])

	t.Run("monitor", func(t *testing.T) {
		checkMonitor(t, jsonLines(t, sec(t, secs, "monitor")), nic, rxIRQ, rxIdx, hot)
	})

	// With a command, --json prints only the summary: window averages, the
	// findings (the verdict) and how the command ended.
	t.Run("monitor-cmd", func(t *testing.T) { checkMonitorCmd(t, secs) })

	t.Run("monitor-cmd-text", func(t *testing.T) {
		txt := sec(t, secs, "monitor-cmd-text")
		if txt.RC >= 3 || !strings.Contains(strings.ToLower(txt.Stdout), "verdict") {
			t.Errorf("monitor -- ping (text) exited %d without a verdict:\n%s\n%s", txt.RC, txt.Stdout, txt.Stderr)
		}
	})
}

// checkMonitorCmd: `monitor --json -- ping` prints the summary last, with the
// verdict's findings and how the command ended (TestTraffic's monitor-cmd).
func checkMonitorCmd(t *testing.T, secs map[string]Section) {
	t.Helper()
	if s := sec(t, secs, "cmd-ping"); !strings.Contains(s.Stdout, "200 packets received") {
		t.Errorf("the monitored ping did not get its replies: %s", s.Stdout)
	}
	lines := jsonLines(t, sec(t, secs, "monitor-cmd"))
	last := lines[len(lines)-1]
	if last["type"] != "summary" {
		t.Fatalf("monitor -- ping: last line is not the summary: %v", last)
	}
	if _, ok := last["findings"]; !ok {
		t.Errorf("monitor -- ping: summary has no findings (the verdict): %v", last)
	}
	var sum struct {
		Samples int `json:"samples"`
		Command *struct {
			Argv     []string `json:"argv"`
			ExitCode int      `json:"exit_code"`
		} `json:"command"`
	}
	b, _ := json.Marshal(last)
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Samples < 1 {
		t.Errorf("monitor -- ping: summary over %d samples", sum.Samples)
	}
	if sum.Command == nil || sum.Command.ExitCode != 0 || len(sum.Command.Argv) == 0 || sum.Command.Argv[0] != "sh" {
		t.Errorf("monitor -- ping: summary's command %+v, want sh ... exited 0", sum.Command)
	}
}

// monitorLine is one line of `monitor --json`: a sample (irq.Sample) or the
// summary (irq.Summary) with a "type".
type monitorLine struct {
	Type string `json:"type"`
	CPUs []struct {
		CPU       int     `json:"cpu"`
		NetRXPerS float64 `json:"net_rx_per_s"`
	} `json:"cpus"`
	NICs []struct {
		Name   string `json:"name"`
		Queues []struct {
			IRQ      int     `json:"irq"`
			Action   string  `json:"action"`
			Kind     string  `json:"kind"`
			Index    int     `json:"index"`
			IRQsPerS float64 `json:"irqs_per_s"`
			CPU      int     `json:"cpu"`
		} `json:"queues"`
	} `json:"nics"`
	Findings []findingJSON `json:"findings"`
}

// checkMonitor holds `monitor --json` samples against the ground truth: IRQ
// irq (the NIC's rx queue idx) and NET_RX ran on CPU hot during the window.
func checkMonitor(t *testing.T, raw []map[string]any, nic string, irq, idx, hot int) {
	t.Helper()
	var samples []monitorLine
	for i, r := range raw {
		var l monitorLine
		b, _ := json.Marshal(r)
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatalf("monitor line %d: %v: %s", i+1, err, b)
		}
		switch l.Type {
		case "sample":
			samples = append(samples, l)
		case "summary":
			if i != len(raw)-1 {
				t.Errorf("monitor: summary is line %d of %d", i+1, len(raw))
			}
		default:
			t.Errorf("monitor: line %d has type %q", i+1, l.Type)
		}
	}
	if raw[len(raw)-1]["type"] != "summary" {
		t.Errorf("monitor: no summary at the end")
	}
	if len(samples) == 0 {
		t.Fatalf("monitor: no samples")
	}
	sawQueue, sawNetRX := false, false
	for i, s := range samples {
		for _, n := range s.NICs {
			for _, q := range n.Queues {
				if q.IRQ != irq || q.IRQsPerS == 0 {
					continue
				}
				if n.Name != nic || q.Kind != "rx" || q.Index != idx {
					t.Errorf("sample %d: IRQ %d reported as %s %s-%d, want %s rx-%d", i, irq, n.Name, q.Kind, q.Index, nic, idx)
				}
				if q.CPU != hot {
					t.Errorf("sample %d: IRQ %d at %.0f/s on CPU%d; the kernel delivered it on CPU%d", i, irq, q.IRQsPerS, q.CPU, hot)
				} else {
					sawQueue = true
				}
			}
		}
		for _, c := range s.CPUs {
			if c.CPU == hot && c.NetRXPerS > 0 {
				sawNetRX = true
			}
		}
	}
	if !sawQueue {
		t.Errorf("monitor: no sample shows %s's rx IRQ %d moving on CPU%d: %+v", nic, irq, hot, samples)
	}
	if !sawNetRX {
		t.Errorf("monitor: no sample shows NET_RX on CPU%d: %+v", hot, samples)
	}
}

// pingCounts reads busybox ping's statistics line ("N packets transmitted,
// M packets received, ...").
func pingCounts(out string) (sent, rcvd int, err error) {
	i := strings.Index(out, " packets transmitted")
	if i < 0 {
		return 0, 0, fmt.Errorf("no ping statistics in %q", out)
	}
	line := out[strings.LastIndexByte(out[:i], '\n')+1:]
	_, err = fmt.Sscanf(line, "%d packets transmitted, %d packets received", &sent, &rcvd)
	return sent, rcvd, err
}
