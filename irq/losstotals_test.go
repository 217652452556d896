package irq

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
)

func TestLossClassOf(t *testing.T) {
	if c, ok := LossClassOf("rx_no_buffer_count"); !ok || c != LossNIC {
		t.Errorf("rx_no_buffer_count: %s %v", c, ok)
	}
	if c, ok := LossClassOf("tx_pause_ctrl_phy"); !ok || c != LossPauseTX {
		t.Errorf("tx_pause_ctrl_phy: %s %v", c, ok)
	}
	for _, n := range []string{"rx_missed_errors", "rx_queue_0_drops", "rx_packets", ""} {
		if IsLossStat(n) {
			t.Errorf("%q is a loss stat", n)
		}
	}
}

// An older tree without the optional counter files still reads; a tree
// without statistics is fs.ErrNotExist; a negative counter is malformed.
func TestReadLossTotals(t *testing.T) {
	base := map[string]string{
		"sys/class/net/eth0/statistics/rx_packets": "100\n", "sys/class/net/eth0/statistics/tx_packets": "1\n",
		"sys/class/net/eth0/statistics/rx_bytes": "1\n", "sys/class/net/eth0/statistics/tx_bytes": "1\n",
		"sys/class/net/eth0/statistics/rx_dropped": "7\n",
	}
	dir := snaptest.Write(t, base)
	lt, err := ReadLossTotals("eth0", map[string]uint64{"rx_out_of_buffer": 5, "rx_packets": 9}, option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	if lt.RXPackets != 100 || len(lt.Losses) != 2 || lt.Losses[0] != (LossTotal{"sysfs:rx_dropped", LossDropped, 7}) ||
		lt.Losses[1] != (LossTotal{"ethtool:rx_out_of_buffer", LossNIC, 5}) {
		t.Errorf("%+v", lt)
	}
	if _, ok := lt.Get("sysfs:rx_missed_errors"); ok {
		t.Error("an absent counter read")
	}
	if _, err := ReadLossTotals("eth1", nil, option.Root(dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no statistics: %v", err)
	}
	snaptest.Add(t, dir, map[string]string{"sys/class/net/eth0/statistics/rx_fifo_errors": "-3\n"})
	if _, err := ReadLossTotals("eth0", nil, option.Root(dir)); !errors.Is(err, ErrMalformed) {
		t.Errorf("negative counter: %v", err)
	}
	var nilTotals *LossTotals
	if _, ok := nilTotals.Get("x"); ok {
		t.Error("nil totals")
	}
}
