package nicdiag

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/netnstest"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// checkFindings runs Check and returns the findings of code.
func checkFindings(t *testing.T, code finding.Code, opts ...Option) []finding.Finding {
	t.Helper()
	r, err := Check(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	var out []finding.Finding
	for _, f := range r.Findings {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

// The I225-V desktop (igc, 2.5G) with carrier counters added: the
// snapshot's kernel (5.13) has carrier_changes, carrier_up_count and
// carrier_down_count, the generator did not copy them; the counts are
// made up, the files are the kernel's.
func TestLinkFlappingSnapshot(t *testing.T) {
	net := "sys/class/net/enp4s0/"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // "" for no finding, else the down count in the summary
		est   bool
	}{
		{"healthy boot", map[string]string{net + "carrier_changes": "2\n", net + "carrier_up_count": "1\n",
			net + "carrier_down_count": "1\n"}, "", false},
		{"nine downs", map[string]string{net + "carrier_changes": "18\n", net + "carrier_up_count": "9\n",
			net + "carrier_down_count": "9\n"}, "", false},
		{"37 downs", map[string]string{net + "carrier_changes": "75\n", net + "carrier_up_count": "38\n",
			net + "carrier_down_count": "37\n"}, "37", false},
		// A kernel before 4.18: only carrier_changes, the downs are half.
		{"old kernel", map[string]string{net + "carrier_changes": "40\n"}, "20", true},
		{"old kernel, quiet", map[string]string{net + "carrier_changes": "19\n"}, "", true},
		{"garbage", map[string]string{net + "carrier_changes": "lots\n"}, "", false},
		{"negative", map[string]string{net + "carrier_changes": "-40\n"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := snaptest.Copy(t, snaps+"i225-nonroot")
			snaptest.Add(t, dir, tc.files)
			fs := checkFindings(t, finding.NICLinkFlapping, option.Root(dir))
			if tc.want == "" {
				if len(fs) != 0 {
					t.Fatalf("unexpected %v", fs)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("got %v", fs)
			}
			f := fs[0]
			if f.Severity != finding.Warn || f.Subject != "enp4s0" || !strings.Contains(f.Summary, " "+tc.want+" times since") ||
				!strings.Contains(f.Fix, "ip -s link show enp4s0") || f.Evidence["operstate"] != "up" {
				t.Errorf("got %+v", f)
			}
			if tc.est != (f.Evidence["carrier_downs_estimated"] == tc.want) || tc.est == (f.Evidence["carrier_down_count"] == tc.want) {
				t.Errorf("evidence %v", f.Evidence)
			}
		})
	}
	// The snapshot as generated has no carrier files: no finding, and the
	// NIC has no Carrier.
	h, err := Inspect(context.Background(), option.Root(snaps+"i225-nonroot"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range h.NICs {
		if n.Carrier != nil {
			t.Errorf("%s: carrier %+v from nowhere", n.Name, n.Carrier)
		}
	}
}

// The I225-V at 1000 Mb/s with the link partner's modes in its ethtool
// answers: a partner that offers up to 1000baseT/Full is the limit; one
// that offers 2500baseT/Full means a downshift. The JSON also carries EEE
// and pause, which old files lack (the snapshot as generated still reads:
// TestLinkFlappingSnapshot).
func TestLinkPartnerSnapshot(t *testing.T) {
	orig, err := os.ReadFile(snaps + "i225-nonroot/ethtool/enp4s0.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		partner string
		want    string
		sev     finding.Severity
	}{
		// The best both ends advertise: not below capability, info.
		{`["10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full", "1000baseT/Full"]`,
			"the link partner offers only up to 1000baseT/Full", finding.Info},
		{`["1000baseT/Full", "2500baseT/Full"]`, "both ends advertise 2500baseT/Full", finding.Warn},
	} {
		dir := snaptest.Copy(t, snaps+"i225-nonroot")
		js := strings.Replace(string(orig), `"speed_mbps": 2500,`, `"speed_mbps": 1000,`, 1)
		js = strings.Replace(js, `"source": "GLINKSETTINGS"`, `"source": "GLINKSETTINGS", "partner_advertised": `+tc.partner, 1)
		js = strings.Replace(js, `"perm_addr"`, `"eee": {"supported": ["100baseT/Full", "1000baseT/Full", "2500baseT/Full"],
			"advertised": ["100baseT/Full", "1000baseT/Full"], "partner_advertised": ["1000baseT/Full"],
			"active": true, "enabled": true, "tx_lpi_enabled": true},
			"pause": {"autoneg": true, "rx": true, "tx": false}, "perm_addr"`, 1)
		snaptest.Add(t, dir, map[string]string{"ethtool/enp4s0.json": js, "sys/class/net/enp4s0/speed": "1000\n"})
		fs := checkFindings(t, finding.NICLinkBelowCapability, option.Root(dir))
		if len(fs) != 1 || !strings.Contains(fs[0].Summary, tc.want) || fs[0].Severity != tc.sev {
			t.Errorf("%s: got %v, want %s", tc.partner, fs, tc.sev)
		}
		h, err := Inspect(context.Background(), option.Root(dir))
		if err != nil {
			t.Fatal(err)
		}
		n := h.NICs[0]
		if n.EEE == nil || !n.EEE.Active || len(n.EEE.PartnerAdvertised) != 1 || n.Pause == nil || !n.Pause.RX || n.Pause.TX {
			t.Errorf("eee %+v pause %+v", n.EEE, n.Pause)
		}
	}
}

// The real kernel: a veth pair in a throwaway namespace, its peer set
// down and up 12 times. A sysfs mounted from inside the namespace shows the
// namespace's netdevs; nicdiag reads it as a root, the counters are the
// kernel's: carrier_down_count moves by 12 and nic.link_flapping speaks,
// at info (veth is virtual). veth has no EEE and no pause: no answer, and
// no error (the "unsupported" path).
func TestKernelVethFlapping(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace and a sysfs mount")
	}
	root := t.TempDir()
	sys := filepath.Join(root, "sys")
	if err := os.Mkdir(sys, 0o755); err != nil {
		t.Fatal(err)
	}
	var (
		setupErr error
		a        *nicinfo.EthtoolAnswers
		ethErr   error
		mounted  bool
	)
	ns := netnstest.New(t)
	netnstest.Do(t, ns, func() {
		la := netlink.NewLinkAttrs()
		la.Name = "ndflap0"
		if setupErr = netlink.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "ndflap1"}); setupErr != nil {
			return
		}
		l0, _ := netlink.LinkByName("ndflap0")
		l1, err := netlink.LinkByName("ndflap1")
		if err != nil || l0 == nil {
			setupErr = err
			return
		}
		if setupErr = netlink.LinkSetUp(l0); setupErr != nil {
			return
		}
		for i := 0; i < 12; i++ {
			if setupErr = netlink.LinkSetUp(l1); setupErr != nil {
				return
			}
			if setupErr = netlink.LinkSetDown(l1); setupErr != nil {
				return
			}
		}
		if setupErr = netlink.LinkSetUp(l1); setupErr != nil {
			return
		}
		// sysfs shows the netdevs of the namespace of the task that
		// mounts it.
		if setupErr = unix.Mount("sysfs", sys, "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); setupErr != nil {
			return
		}
		mounted = true
		src := nicinfo.LiveEthtool()
		defer src.(interface{ Close() error }).Close()
		a, ethErr = src.Answers(context.Background(), "ndflap0")
	})
	if mounted {
		t.Cleanup(func() { unix.Unmount(sys, unix.MNT_DETACH) })
	}
	if setupErr != nil {
		t.Skipf("no veth in a namespace with its sysfs: %v", setupErr)
	}
	if ethErr != nil {
		t.Fatal(ethErr)
	}
	if a.EEE != nil || a.Pause != nil || a.Errors["eee"] != "" || a.Errors["pause"] != "" {
		t.Errorf("veth: eee %+v pause %+v errors %v; want neither, no error", a.EEE, a.Pause, a.Errors)
	}
	if a.Link == nil || len(a.Link.PartnerAdvertised) != 0 {
		t.Errorf("veth link %+v; want no partner modes", a.Link)
	}
	b, err := os.ReadFile(filepath.Join(sys, "class/net/ndflap0/carrier_down_count"))
	if err != nil {
		t.Skipf("no carrier_down_count: %v", err)
	}
	downs, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	t.Logf("ndflap0 carrier_down_count %d", downs)
	fs := checkFindings(t, finding.NICLinkFlapping, option.Root(root), WithInterfaces("ndflap0"))
	if downs < 12 || len(fs) != 1 || fs[0].Severity != finding.Info || fs[0].Evidence["carrier_down_count"] != strconv.Itoa(downs) {
		t.Fatalf("downs %d: %v", downs, fs)
	}
	t.Logf("%s", fs[0].Summary)
}

// The compiled-in table reads, and each row names a source.
func TestKnownIssuesTable(t *testing.T) {
	rows := KnownIssues()
	if len(rows) < 3 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, k := range rows {
		if !strings.HasPrefix(k.Source, "https://") || k.Symptom == "" || k.Fix == "" {
			t.Errorf("row %+v", k)
		}
	}
	hdr := strings.Join(issueColumns, "\t") + "\n"
	good := "pci\t8086\t15f3\t03\tigc\teee_active\twarn\ts\tf\thttps://example.org/x\n"
	if rows, err := parseKnownIssues(strings.NewReader(hdr + good)); err != nil || rows[0].Revision == nil || *rows[0].Revision != 3 {
		t.Errorf("good row: %+v %v", rows, err)
	}
	for name, row := range map[string]string{
		"no source":      "pci\t8086\t15f3\t*\tigc\teee_active\twarn\ts\tf\t-\n",
		"http source":    "pci\t8086\t15f3\t*\tigc\teee_active\twarn\ts\tf\thttp://example.org\n",
		"short":          "pci\t8086\t15f3\t*\tigc\teee_active\twarn\ts\tf\n",
		"bus":            "isa\t8086\t15f3\t*\tigc\teee_active\twarn\ts\tf\thttps://x\n",
		"upper hex":      "pci\t8086\t15F3\t*\tigc\teee_active\twarn\ts\tf\thttps://x\n",
		"revision":       "pci\t8086\t15f3\t3\tigc\teee_active\twarn\ts\tf\thttps://x\n",
		"usb revision":   "usb\t0bda\t8156\t01\tcdc_ncm\tbound\tinfo\ts\tf\thttps://x\n",
		"usb aspm":       "usb\t0bda\t8156\t*\tcdc_ncm\taspm_l1\tinfo\ts\tf\thttps://x\n",
		"condition":      "pci\t8086\t15f3\t*\tigc\tmoon\twarn\ts\tf\thttps://x\n",
		"severity":       "pci\t8086\t15f3\t*\tigc\teee_active\terror\ts\tf\thttps://x\n",
		"empty field":    "pci\t8086\t15f3\t*\t\teee_active\twarn\ts\tf\thttps://x\n",
		"control":        "pci\t8086\t15f3\t*\tigc\teee_active\twarn\ts\x1b[31m\tf\thttps://x\n",
		"padded":         "pci\t8086\t15f3\t*\tigc \teee_active\twarn\ts\tf\thttps://x\n",
		"header missing": "",
	} {
		in := hdr + row
		if name == "header missing" {
			in = good
		}
		if _, err := parseKnownIssues(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzKnownIssues(f *testing.F) {
	f.Add(knownIssuesTSV)
	f.Add(strings.Join(issueColumns, "\t") + "\nusb\t0bda\t8156\t*\tcdc_ncm\tbound\tinfo\ts\tf\thttps://x\n")
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := parseKnownIssues(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, k := range rows {
			if k.Driver == "" || k.Fix == "" || !strings.HasPrefix(k.Source, "https://") {
				t.Fatalf("row %+v accepted", k)
			}
			// The check must not panic on whatever row parsed.
			n := &NIC{NIC: nicinfo.NIC{Name: "eth0", Driver: k.Driver,
				PCI: &nicinfo.PCIFunction{VendorID: k.VendorID, DeviceID: k.DeviceID},
				USB: &nicinfo.USBDevice{VendorID: k.VendorID, ProductID: k.DeviceID}}}
			knownIssues(n, []KnownIssue{k})
		}
	})
}

// The I225-V (igc, 8086:15f3) with its EEE state in the ethtool answers:
// active warns with the fix `ethtool --set-eee enp4s0 eee off` and the
// source; enabled but inactive, or disabled, says nothing; the snapshot as
// generated (no EEE answer: the file predates it) says info.
func TestKnownIssueI225EEE(t *testing.T) {
	orig, err := os.ReadFile(snaps + "i225-nonroot/ethtool/enp4s0.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		eee  string // "" leaves the file as it is
		want finding.Severity
	}{
		{"not recorded", "", finding.Info},
		{"active", `{"active": true, "enabled": true, "tx_lpi_enabled": true}`, finding.Warn},
		{"enabled, inactive", `{"active": false, "enabled": true, "tx_lpi_enabled": true}`, -1},
		{"disabled", `{"active": false, "enabled": false, "tx_lpi_enabled": false}`, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := snaptest.Copy(t, snaps+"i225-nonroot")
			if tc.eee != "" {
				js := strings.Replace(string(orig), `"perm_addr"`, `"eee": `+tc.eee+`, "perm_addr"`, 1)
				snaptest.Add(t, dir, map[string]string{"ethtool/enp4s0.json": js})
			}
			fs := checkFindings(t, finding.NICKnownIssue, option.Root(dir))
			if tc.want < 0 {
				if len(fs) != 0 {
					t.Fatalf("unexpected %v", fs)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("got %v", fs)
			}
			f := fs[0]
			if f.Severity != tc.want || f.Subject != "enp4s0" || f.Evidence["id"] != "8086:15f3" ||
				f.Evidence["revision"] != "03" || f.Evidence["firmware_version"] != "1082:8770" ||
				!strings.Contains(f.Fix, "ethtool --set-eee enp4s0 eee off") ||
				!strings.Contains(f.Fix, "https://github.com/vyos/vyos-build/pull/366") {
				t.Errorf("got %+v", f)
			}
			if tc.want == finding.Info && !strings.Contains(f.Summary, "could not be read") {
				t.Errorf("info summary %q", f.Summary)
			}
		})
	}
}

// The RTL8156 on cdc_ncm (a real dump): the row holds as soon as cdc_ncm
// is bound, at its severity, info.
func TestKnownIssueRTL8156CDCNCM(t *testing.T) {
	fs := checkFindings(t, finding.NICKnownIssue, option.Root(snaps+"rtl8156-cdc-ncm"))
	if len(fs) != 1 || fs[0].Severity != finding.Info || fs[0].Evidence["id"] != "0bda:8156" ||
		fs[0].Evidence["bus"] != "usb" || !strings.Contains(fs[0].Fix, "r8152") {
		t.Fatalf("got %v", fs)
	}
}

// ASPM L1 and revisions, on NICs made in the test: no snapshot holds an
// RTL8125 on r8125. The PCIe capability's LnkCtl as the walker decodes it.
func TestKnownIssueASPMAndRevision(t *testing.T) {
	rtl := func(aspm pcie.ASPM, express bool) *NIC {
		n := &NIC{NIC: nicinfo.NIC{Name: "enp5s0", Driver: "r8125",
			PCI: &nicinfo.PCIFunction{Address: "0000:05:00.0", VendorID: 0x10ec, DeviceID: 0x8125, Revision: 5}}}
		n.Path = &pcie.Path{}
		if express {
			n.Path.Device.Config = &pcie.Config{Express: &pcie.Express{HasLink: true, ASPMEnabled: aspm}}
		}
		return n
	}
	issues := KnownIssues()
	if fs := knownIssues(rtl(pcie.ASPML1, true), issues); len(fs) != 1 || fs[0].Severity != finding.Warn ||
		!strings.Contains(fs[0].Fix, "/sys/bus/pci/devices/0000:05:00.0/link/l1_aspm") {
		t.Errorf("L1: %v", fs)
	}
	if fs := knownIssues(rtl(pcie.ASPML0s, true), issues); len(fs) != 0 {
		t.Errorf("L0s only: %v", fs)
	}
	if fs := knownIssues(rtl(0, false), issues); len(fs) != 1 || fs[0].Severity != finding.Info {
		t.Errorf("no config: %v", fs)
	}
	r8169 := rtl(pcie.ASPML1, true)
	r8169.Driver = "r8169"
	if fs := knownIssues(r8169, issues); len(fs) != 0 {
		t.Errorf("r8169: %v", fs)
	}
	rev := uint8(3)
	row := KnownIssue{Bus: "pci", VendorID: 0x10ec, DeviceID: 0x8125, Revision: &rev, Driver: "r8125",
		Condition: IssueBound, Severity: "warn", Symptom: "s", Fix: "f", Source: "https://x"}
	if fs := knownIssues(rtl(0, false), []KnownIssue{row}); len(fs) != 0 {
		t.Errorf("revision 05 matched a row for 03: %v", fs)
	}
	rev = 5
	if fs := knownIssues(rtl(0, false), []KnownIssue{row}); len(fs) != 1 || fs[0].Severity != finding.Warn {
		t.Errorf("revision 05: %v", fs)
	}
}
