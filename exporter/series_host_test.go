package exporter

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
)

// auditTree is x722-lewisburg with the host audit's facts added
// (reconstructed, in the kernel's and nicdiag snapshot's formats): eno1's
// pause and ENA-named allowance counters, 42 CRC errors and RS-FEC
// counters, an XDP program on eno1, a VXLAN
// device, the connection-tracking table, br_netfilter's sysctls, and
// Skylake-SP idle states (intel_idle's skx_cstates) on CPU 0, where
// eno1's first queue IRQ lands.
func auditTree(t *testing.T) string {
	dir := snaptest.Copy(t, filepath.Join("..", "testdata", "snapshots", "x722-lewisburg"))
	p := filepath.Join(dir, "ethtool", "eno1.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"schema": 1,`), []byte(`"schema": 1, "loss_stats": {"port.link_xoff_rx": 5000, "port.link_xoff_tx": 7, "bw_out_allowance_exceeded": 12}, "fec": {"active": "RS", "corrected_blocks": 10, "uncorrectable_blocks": 2},`), 1)
	os.WriteFile(p, b, 0o644)
	files := map[string]string{
		"netlink/eno1.json":                               `{"schema": 1, "xdp": {"mode": "generic", "prog_id": 42}}`,
		"sys/class/net/eno1/statistics/rx_crc_errors":     "42\n",
		"sys/class/net/vx0":                               "->../../devices/virtual/net/vx0",
		"sys/devices/virtual/net/vx0/uevent":              "DEVTYPE=vxlan\nINTERFACE=vx0\n",
		"sys/devices/virtual/net/vx0/mtu":                 "1450\n",
		"netlink/vx0.json":                                `{"schema": 1, "tunnel": {"kind": "vxlan", "vni": 42, "port": 4789, "link": "eno1"}}`,
		"proc/sys/net/netfilter/nf_conntrack_count":       "100\n",
		"proc/sys/net/netfilter/nf_conntrack_max":         "262144\n",
		"proc/net/stat/nf_conntrack":                      "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n00000064  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000002 00000003 00000000  00000000 00000000 00000000 00000000\n",
		"proc/sys/net/bridge/bridge-nf-call-iptables":     "1\n",
		"sys/devices/system/cpu/cpuidle/current_driver":   "intel_idle\n",
		"sys/devices/system/cpu/cpuidle/current_governor": "menu\n",
	}
	for k, st := range [][2]string{{"POLL", "0"}, {"C1", "2"}, {"C1E", "10"}, {"C6", "133"}} {
		d := "sys/devices/system/cpu/cpu0/cpuidle/state" + string(rune('0'+k)) + "/"
		files[d+"name"], files[d+"latency"], files[d+"disable"] = st[0]+"\n", st[1]+"\n", "0\n"
	}
	snaptest.Add(t, dir, files)
	return dir
}

// The new series carry the tree's values, and promtool accepts the
// exposition where it is installed.
func TestHostAuditSeries(t *testing.T) {
	text := exposition(t, New(option.Root(auditTree(t))))
	fams := parse(t, bytes.NewReader(text))
	want := []struct {
		fam    string
		labels map[string]string
		v      float64
	}{
		{"nicdiag_nic_pause_frames_total", map[string]string{"iface": "eno1", "direction": "received"}, 5000},
		{"nicdiag_nic_pause_frames_total", map[string]string{"iface": "eno1", "direction": "sent"}, 7},
		{"nicdiag_nic_allowance_exceeded_total", map[string]string{"iface": "eno1", "allowance": "bw_out"}, 12},
		{"nicdiag_nic_xdp_attached", map[string]string{"iface": "eno1", "mode": "generic"}, 1},
		{"nicdiag_tunnel_info", map[string]string{"iface": "vx0", "kind": "vxlan", "vni": "42", "port": "4789", "link": "eno1"}, 1},
		{"nicdiag_conntrack_entries", map[string]string{"kind": "max"}, 262144},
		{"nicdiag_conntrack_events_total", map[string]string{"event": "early_drop"}, 3},
		{"nicdiag_bridge_netfilter_enabled", map[string]string{"family": "ipv4"}, 1},
		{"nicdiag_cpu_idle_deepest_exit_latency_seconds", map[string]string{"iface": "eno1", "cpu": "0", "state": "C6"}, 133e-6},
		{"nicdiag_nic_damaged_frames_total", map[string]string{"iface": "eno1", "kind": "crc"}, 42},
		{"nicdiag_nic_fec_blocks_total", map[string]string{"iface": "eno1", "kind": "uncorrectable"}, 2},
		{"nicdiag_pcie_hop_speed_transfers_per_second", map[string]string{"iface": "eno1", "state": "current", "hop": "0"}, 2.5e9},
	}
	for _, w := range want {
		f := fams[w.fam]
		found := false
		for _, m := range f.GetMetric() {
			l := labels(m)
			match := true
			for k, v := range w.labels {
				match = match && l[k] == v
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			if match && v == w.v {
				found = true
			}
		}
		if !found {
			t.Errorf("%s%v = %v missing in\n%v", w.fam, w.labels, w.v, f)
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
}
