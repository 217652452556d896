package nicdiag

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// x722OneQueue is x722-lewisburg with eno1 cut to one queue pair, as
// `ethtool -L eno1 combined 1` leaves it: channels combined 1 of 8,
// queues/rx-0 and tx-0 only, and one eno1-TxRx-0 vector in
// /proc/interrupts (the other seven lines removed). Everything else is
// the tree as generated.
func x722OneQueue(t *testing.T) tree {
	v := variant(t, "x722-lewisburg").ethtool("eno1", func(a *nicinfo.EthtoolAnswers) { a.Channels.Combined = 1 })
	var gone, lines []string
	for i := 1; i < 8; i++ {
		gone = append(gone, fmt.Sprintf("sys/class/net/eno1/queues/rx-%d", i), fmt.Sprintf("sys/class/net/eno1/queues/tx-%d", i))
		lines = append(lines, fmt.Sprintf("eno1-TxRx-%d\n", i))
	}
	return v.remove(gone...).dropLines("proc/interrupts", lines...)
}

// nic.single_queue is judged by packet rate: the I219-LM at 1 Gb/s needs
// 81 kpps of full-size frames, which one core moves (info: one of the two
// false warnings of the healthy hosts); the X722 cut to one queue at 10
// Gb/s needs 813 kpps (warn); with no carrier, its fastest supported mode
// (10000baseT/Full) is what it is judged at, and the summary says so.
func TestSingleQueueRate(t *testing.T) {
	fs := checkTree(t, snaps+"i219-optiplex")
	f := find(fs, finding.NICSingleQueue, "eno1")
	if f == nil || f.Severity != finding.Info || !strings.Contains(f.Summary, "81 k 1518-byte frames/s") ||
		f.Evidence["full_frames_per_s"] != "81274" {
		t.Errorf("I219 at 1 GbE: %v", f)
	}
	for _, name := range []string{"e810-ice-numa1", "ar8151-desktop", "rtl8111-ich10-x58", "ryzen-i350-rtl8168"} {
		for _, f := range checkTree(t, snaps+name) {
			if f.Code == finding.NICSingleQueue && f.Severity >= finding.Warn {
				t.Errorf("%s: %s", name, f)
			}
		}
	}

	v := x722OneQueue(t)
	f = find(checkTree(t, v.dir, WithInterfaces("eno1")), finding.NICSingleQueue, "eno1")
	if f == nil || f.Severity != finding.Warn || !strings.Contains(f.Summary, "at 10000 Mb/s line rate is 813 k") ||
		!strings.Contains(f.Fix, "ethtool -L eno1 combined 8") {
		t.Fatalf("X722 at 10 Gb/s, one queue: %v", f)
	}
	v.ethtool("eno1", func(a *nicinfo.EthtoolAnswers) { a.Link.SpeedMbps = -1 }).
		files(map[string]string{"sys/class/net/eno1/speed": "-1\n", "sys/class/net/eno1/operstate": "down\n"})
	f = find(checkTree(t, v.dir, WithInterfaces("eno1")), finding.NICSingleQueue, "eno1")
	if f == nil || f.Severity != finding.Warn || !strings.Contains(f.Summary, "its fastest supported mode, 10000baseT/Full (link speed unknown)") {
		t.Errorf("X722 without carrier: %v", f)
	}
}

// The seed 82576 with port 1 uncabled (82576-minipcie-x1 changed: enp1s0f1
// operstate down, carrier 0, speed -1 in sysfs and in its ethtool
// answer): the default workload counts port 0 alone, 987 of the x1 link's
// 1435 Mb/s, so no pcie.bottleneck; the uncabled port raises none either.
// Cabled (the tree as generated), both ports count and it warns.
func TestBottleneckCountsCarryingPorts(t *testing.T) {
	if f := find(checkTree(t, snaps+"82576-minipcie-x1"), finding.PCIeBottleneck, "enp1s0f0"); f == nil || f.Severity != finding.Warn {
		t.Fatalf("both ports up: %v", f)
	}
	v := variant(t, "82576-minipcie-x1").
		ethtool("enp1s0f1", func(a *nicinfo.EthtoolAnswers) { a.Link.SpeedMbps = -1 }).
		files(map[string]string{"sys/class/net/enp1s0f1/operstate": "down\n", "sys/class/net/enp1s0f1/speed": "-1\n", "sys/class/net/enp1s0f1/carrier": "0\n"})
	r, err := Check(t.Context(), option.Root(v.dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		if f.Code == finding.PCIeBottleneck {
			t.Errorf("port 1 uncabled: %s", f)
		}
	}
	n, _ := r.Host.Lookup("enp1s0f0")
	if b := n.Budget; b == nil || b.Workload.Ports != 1 || b.Bound != "ethernet" {
		t.Errorf("enp1s0f0's budget: %+v", b)
	}
	n, _ = r.Host.Lookup("enp1s0f1")
	if b := n.Budget; b == nil || b.Workload.PortMbps != 1000 || b.PortSpeedSource != "fastest supported link mode (link speed unknown)" {
		t.Errorf("enp1s0f1's budget: %+v", b)
	}
}
