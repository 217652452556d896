package nicdiag

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// answersTree copies a bundled snapshot and edits iface's
// ethtool/IFACE.json: the offload and coalescing answers the tests add
// are reconstructed (written the way LiveEthtool records them), the rest
// of each tree is the real machine's.
func answersTree(t *testing.T, snap, iface string, edit func(a *nicinfo.EthtoolAnswers)) string {
	t.Helper()
	dir := snaptest.Copy(t, snaps+snap)
	p := filepath.Join(dir, "ethtool", iface+".json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var a nicinfo.EthtoolAnswers
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	edit(&a)
	if b, err = json.Marshal(&a); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// i40eFeatures is what `ethtool -k` shows on an X722 port (i40e): every
// judged offload on and changeable, transmit checksumming through
// tx-checksum-ip-generic (ipv4/ipv6 fixed off), no LRO.
func i40eFeatures() map[string]nicinfo.Feature {
	on := nicinfo.Feature{Active: true, Requested: true}
	return map[string]nicinfo.Feature{
		nicinfo.FeatureGRO: on, nicinfo.FeatureTSO: on, nicinfo.FeatureTSO6: on, nicinfo.FeatureGSO: on,
		nicinfo.FeatureRXChecksum: on, nicinfo.FeatureTXChecksumIP: on, nicinfo.FeatureScatterGather: on,
		nicinfo.FeatureTXChecksumIPv4: {Fixed: true}, nicinfo.FeatureTXChecksumIPv6: {Fixed: true},
		nicinfo.FeatureLRO: {Fixed: true},
	}
}

// findingOf runs Check on dir (selecting iface) and returns the finding
// with the code, or nil.
func findingOf(t *testing.T, dir, iface string, code finding.Code) *finding.Finding {
	t.Helper()
	r, err := Check(context.Background(), option.Root(dir), WithInterfaces(iface))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Findings {
		if r.Findings[i].Code == code {
			return &r.Findings[i]
		}
	}
	return nil
}

func TestOffloadOff(t *testing.T) {
	type feats = map[string]nicinfo.Feature
	for _, tc := range []struct {
		name   string
		edit   func(feats)
		sev    finding.Severity // -1: no finding
		off    string
		fix    []string
		phrase string
	}{
		{"all on", func(feats) {}, -1, "", nil, ""},
		{"GRO off", func(f feats) { f[nicinfo.FeatureGRO] = nicinfo.Feature{} }, finding.Warn, "rx-gro",
			[]string{"`ethtool -K eno1 gro on`", "GenericReceiveOffload=yes"}, "once per frame (813 kpps of 1518-byte frames at 10000 Mb/s)"},
		{"GRO off where the driver fixes it", func(f feats) { f[nicinfo.FeatureGRO] = nicinfo.Feature{Fixed: true} }, -1, "", nil, ""},
		// tx-checksum-ip-generic off: the kernel keeps TSO off though it is
		// requested (netdev_fix_features), as on the real veth test.
		{"transmit checksumming off", func(f feats) {
			f[nicinfo.FeatureTXChecksumIP] = nicinfo.Feature{}
			f[nicinfo.FeatureTSO] = nicinfo.Feature{Requested: true}
			f[nicinfo.FeatureTSO6] = nicinfo.Feature{Requested: true}
		}, finding.Warn, "tx-tcp-segmentation, tx-tcp6-segmentation, tx-checksum-ipv4, tx-checksum-ip-generic, tx-checksum-ipv6",
			[]string{"`ethtool -K eno1 tso on tx on`", "TCPSegmentationOffload=yes TCP6SegmentationOffload=yes", "TransmitChecksumOffload=yes"},
			"queues every one (813 kpps of 1518-byte frames at 10000 Mb/s); without transmit checksum offload the CPU sums every byte it sends (1250 MB/s at line rate), and the kernel keeps TSO off with it"},
		// Scatter-gather fixed off: TSO cannot be turned on, nothing to say.
		{"TSO off behind fixed scatter-gather", func(f feats) {
			f[nicinfo.FeatureScatterGather] = nicinfo.Feature{Fixed: true}
			f[nicinfo.FeatureTSO] = nicinfo.Feature{}
		}, -1, "", nil, ""},
		{"TSO and scatter-gather off", func(f feats) {
			f[nicinfo.FeatureScatterGather] = nicinfo.Feature{}
			f[nicinfo.FeatureTSO] = nicinfo.Feature{Requested: true}
		}, finding.Warn, "tx-tcp-segmentation, tx-scatter-gather", []string{"`ethtool -K eno1 tso on sg on`"}, "cuts each TCP send"},
		{"receive checksumming and GSO off", func(f feats) {
			f[nicinfo.FeatureRXChecksum] = nicinfo.Feature{}
			f[nicinfo.FeatureGSO] = nicinfo.Feature{}
		}, finding.Warn, "tx-generic-segmentation, rx-checksum",
			[]string{"`ethtool -K eno1 gso on rx on`", "GenericSegmentationOffload=yes ReceiveChecksumOffload=yes"}, "TCP uses GSO whatever this says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := answersTree(t, "x722-lewisburg", "eno1", func(a *nicinfo.EthtoolAnswers) {
				a.Features = i40eFeatures()
				tc.edit(a.Features)
			})
			got := findingOf(t, dir, "eno1", finding.NICOffloadOff)
			switch {
			case tc.sev < 0 && got != nil:
				t.Fatalf("unexpected %s", got)
			case tc.sev < 0:
				return
			case got == nil:
				t.Fatal("no nic.offload_off")
			}
			if got.Severity != tc.sev || got.Subject != "eno1" || got.Evidence["offloads_off"] != tc.off ||
				got.Evidence["link_mbps"] != "10000" || got.Evidence["full_frames_per_s"] != "812744" {
				t.Errorf("%s %v", got, got.Evidence)
			}
			for _, f := range tc.fix {
				if !strings.Contains(got.Fix, f) {
					t.Errorf("fix %q lacks %q", got.Fix, f)
				}
			}
			if !strings.Contains(got.Summary, tc.phrase) {
				t.Errorf("summary %q lacks %q", got.Summary, tc.phrase)
			}
		})
	}
}

// Below 10 Gb/s, or on an emulated NIC whose speed is nominal, GRO off is
// info; a paravirtual NIC is not judged.
func TestOffloadOffSeverity(t *testing.T) {
	groOff := func(a *nicinfo.EthtoolAnswers) {
		a.Features = i40eFeatures()
		a.Features[nicinfo.FeatureGRO] = nicinfo.Feature{}
	}
	gig := answersTree(t, "82576-minipcie-x1", "enp1s0f0", groOff)
	if f := findingOf(t, gig, "enp1s0f0", finding.NICOffloadOff); f == nil || f.Severity != finding.Info ||
		!strings.Contains(f.Summary, "(81 kpps of 1518-byte frames at 1000 Mb/s)") {
		t.Errorf("igb at 1000 Mb/s: %v", f)
	}
	// The X722 as QEMU would show it: subsystem vendor 1af4 (emulated).
	emu := answersTree(t, "x722-lewisburg", "eno1", groOff)
	snaptest.Add(t, emu, map[string]string{"sys/bus/pci/devices/0000:b5:00.0/subsystem_vendor": "0x1af4\n"})
	if f := findingOf(t, emu, "eno1", finding.NICOffloadOff); f == nil || f.Severity != finding.Info ||
		f.Evidence["label"] != nicinfo.LabelEmulated || !strings.Contains(f.Summary, "nominal") {
		t.Errorf("emulated X722: %v", f)
	}
	virt := answersTree(t, "virtio-kvm", "eth0", groOff)
	if f := findingOf(t, virt, "eth0", finding.NICOffloadOff); f != nil {
		t.Errorf("virtio: %s", f)
	}
}

func TestLROForwarding(t *testing.T) {
	lroOn := func(fixed bool) func(a *nicinfo.EthtoolAnswers) {
		return func(a *nicinfo.EthtoolAnswers) {
			a.Features = i40eFeatures()
			a.Features[nicinfo.FeatureLRO] = nicinfo.Feature{Active: true, Requested: true, Fixed: fixed}
		}
	}
	// eno1's netdev directory, and the way up from it to sys/devices.
	const eno1 = "sys/devices/pci0000:b2/0000:b2:00.0/0000:b3:00.0/0000:b4:03.0/0000:b5:00.0/net/eno1"
	const up = "../../../../../../"
	bridgePort := map[string]string{
		"sys/class/net/br0":                   "->../../devices/virtual/net/br0",
		"sys/devices/virtual/net/br0/ifindex": "9\n",
		eno1 + "/master":                      "->" + up + "virtual/net/br0",
		eno1 + "/brport/bridge":               "->../" + up + "virtual/net/br0",
		eno1 + "/brport/state":                "3\n",
	}
	sysctls := func(v4, v6 string) map[string]string {
		return map[string]string{"proc/sys/net/ipv4/ip_forward": v4 + "\n", "proc/sys/net/ipv6/conf/all/forwarding": v6 + "\n"}
	}
	for _, tc := range []struct {
		name  string
		fixed bool
		lro   bool
		files map[string]string
		want  map[string]string // evidence; nil: no finding
		fix   string
	}{
		{"router", false, true, sysctls("1", "0"), map[string]string{"ip_forward": "1", "ipv6_forwarding": "0", "rx-lro": "on"}, "`ethtool -K eno1 lro off`"},
		{"IPv6 router", false, true, sysctls("0", "1"), map[string]string{"ip_forward": "0", "ipv6_forwarding": "1"}, "LargeReceiveOffload=no"},
		{"not forwarding", false, true, sysctls("0", "0"), nil, ""},
		{"bridge port, sysctls unknown", false, true, bridgePort, map[string]string{"bridge": "br0"}, "lro off"},
		{"LRO off on a router", false, false, sysctls("1", "1"), nil, ""},
		{"LRO fixed on", true, true, sysctls("1", "0"), map[string]string{"rx-lro": "on [fixed]"}, "does not let LRO be turned off"},
		{"nothing known", false, true, map[string]string{}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := answersTree(t, "x722-lewisburg", "eno1", lroOn(tc.fixed))
			if !tc.lro {
				dir = answersTree(t, "x722-lewisburg", "eno1", func(a *nicinfo.EthtoolAnswers) { a.Features = i40eFeatures() })
			}
			snaptest.Add(t, dir, tc.files)
			got := findingOf(t, dir, "eno1", finding.NICLROForwarding)
			if tc.want == nil {
				if got != nil {
					t.Fatalf("unexpected %s", got)
				}
				return
			}
			if got == nil {
				t.Fatal("no nic.lro_forwarding")
			}
			if got.Severity != finding.Warn || !strings.Contains(got.Fix, tc.fix) ||
				!strings.Contains(got.Summary, "received packets cannot be forwarded while LRO is enabled") {
				t.Errorf("%s\nfix %s", got, got.Fix)
			}
			for k, v := range tc.want {
				if got.Evidence[k] != v {
					t.Errorf("evidence %s = %q, want %q (%v)", k, got.Evidence[k], v, got.Evidence)
				}
			}
		})
	}
	// A paravirtual NIC's LRO packets carry their GSO type: no verdict.
	virt := answersTree(t, "virtio-kvm", "eth0", lroOn(false))
	snaptest.Add(t, virt, sysctls("1", "0"))
	if f := findingOf(t, virt, "eth0", finding.NICLROForwarding); f != nil {
		t.Errorf("virtio: %s", f)
	}
}

// No bundled snapshot has feature or coalescing answers (they predate
// them): none of the new verdicts may appear, and a missing answer is not
// a finding.
func TestOffloadsNeedAnswers(t *testing.T) {
	ents, err := os.ReadDir(snaps)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() || e.Name() == "src" {
			continue
		}
		r, err := Check(context.Background(), option.Root(snaps+e.Name()))
		if err != nil {
			continue // a tree that is not a host (nvme-gen5-at-gen4 has no netdev): other tests judge it
		}
		for _, f := range r.Findings {
			switch f.Code {
			case finding.NICOffloadOff, finding.NICLROForwarding, finding.NICCoalesceOff:
				t.Errorf("%s: %s", e.Name(), f)
			}
		}
	}
}
