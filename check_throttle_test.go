package nicdiag

import (
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// pauseTree is 82576-minipcie-x1 with enp1s0f0's igb pause counters set
// (reconstructed: the names are igb's ethtool -S names, the tree's own
// rx_packets 33498321 and tx_packets 33120987 are kept) and flow control
// on both ways unless pause says otherwise.
func pauseTree(t *testing.T, stats map[string]uint64, pause *nicinfo.Pause) string {
	if pause == nil {
		pause = &nicinfo.Pause{Autoneg: true, RX: true, TX: true}
	}
	return variant(t, "82576-minipcie-x1").ethtool("enp1s0f0", func(a *nicinfo.EthtoolAnswers) {
		a.LossStats, a.Pause = stats, pause
	}).dir
}

func TestPauseFrames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stats map[string]uint64
		pause *nicinfo.Pause
		sev   finding.Severity // -1: none
		says  []string
	}{
		// The host: 48 M pause frames received.
		{"peer throttles", map[string]uint64{"rx_flow_control_xoff": 24000000, "rx_flow_control_xon": 24000000}, nil, finding.Warn,
			[]string{"received 48000000 pause frames (XOFF and XON; 145 % of the 33.1M frames it sent)", "the link partner told this host to stop sending, each XOFF for up to 65535 × 512 bit times", "fix:ethtool -A enp1s0f0 autoneg off rx off tx off"}},
		{"host throttles", map[string]uint64{"tx_flow_control_xoff": 90000, "tx_flow_control_xon": 90000}, nil, finding.Warn,
			[]string{"sent 180000 pause frames (XOFF and XON; 0.54 % of the 33.5M frames it received)", "fix:more queues", "fix:ethtool -a enp1s0f0"}},
		{"counted, not obeyed", map[string]uint64{"rx_flow_control_xoff": 5000000}, &nicinfo.Pause{}, finding.Info,
			[]string{"RX flow control is off now, so they are counted, not obeyed"}},
		{"a few", map[string]uint64{"rx_flow_control_xoff": 2000, "tx_flow_control_xoff": 999}, nil, finding.Info, []string{"received 2000 pause frames"}},
		// The healthy host: a handful since boot, or none.
		{"healthy", map[string]uint64{"rx_flow_control_xoff": 12, "tx_flow_control_xoff": 3, "rx_no_buffer_count": 0}, nil, -1, nil},
		{"no counters", nil, nil, -1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := find(checkTree(t, pauseTree(t, tc.stats, tc.pause), WithInterfaces("enp1s0f0")), finding.NICPauseFrames, "enp1s0f0")
			switch {
			case tc.sev < 0 && f != nil:
				t.Fatalf("unexpected %s", f)
			case tc.sev < 0:
				return
			case f == nil || f.Severity != tc.sev:
				t.Fatalf("got %v, want %s", f, tc.sev)
			}
			for _, s := range tc.says {
				if w, ok := strings.CutPrefix(s, "fix:"); ok && !strings.Contains(f.Fix, w) || !ok && !strings.Contains(f.Summary, s) {
					t.Errorf("%q missing:\n%s\nfix: %s", s, f.Summary, f.Fix)
				}
			}
		})
	}
}

// enaTree is x722-lewisburg with eno1's driver statistics holding ENA's
// allowance counters (names from drivers/net/ethernet/amazon/ena/
// ena_ethtool.c; the 5.4 M of bw_out is the EC2 host). Only the
// counters matter to the check, not the driver that printed them.
func TestAllowanceExceeded(t *testing.T) {
	run := func(stats map[string]uint64) *finding.Finding {
		dir := variant(t, "x722-lewisburg").ethtool("eno1", func(a *nicinfo.EthtoolAnswers) { a.LossStats = stats }).dir
		return find(checkTree(t, dir, WithInterfaces("eno1")), finding.NICAllowanceExceeded, "eno1")
	}
	f := run(map[string]uint64{"bw_out_allowance_exceeded": 5400000, "pps_allowance_exceeded": 12, "bw_in_allowance_exceeded": 0})
	if f == nil || f.Severity != finding.Warn || !strings.Contains(f.Summary, "5400000 packets queued or dropped for outbound traffic above the instance's aggregate bandwidth") ||
		!strings.Contains(f.Summary, "12 packets") || strings.Contains(f.Summary, "bw_in") ||
		!strings.Contains(f.Fix, "bw_out_allowance_exceeded: a larger instance size") || !strings.Contains(f.Fix, "mtu 9001") {
		t.Errorf("%v\nfix: %s", f, f.Fix)
	}
	if f := run(map[string]uint64{"linklocal_allowance_exceeded": 40}); f == nil || f.Severity != finding.Info || !strings.Contains(f.Fix, "DNS cache") {
		t.Errorf("a burst: %v", f)
	}
	if f := run(map[string]uint64{"bw_in_allowance_exceeded": 0, "pps_allowance_exceeded": 0}); f != nil {
		t.Errorf("healthy: %s", f)
	}
}
