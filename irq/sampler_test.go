package irq

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// hostState is the counters of a fake 2- or 3-CPU host.
type hostState struct {
	cpus     []int
	irq38    []uint64 // virtio2-input.0 per CPU column
	stat     [][3]int // per CPU: softirq ticks, idle ticks, user ticks
	netRX    []uint64 // /proc/softirqs NET_RX per possible CPU (0, 1, 2)
	softnet  [][3]uint32
	rxPkts   uint64
	irqTicks int
}

func (h hostState) write(t *testing.T, root string) {
	t.Helper()
	ints := "    "
	for _, c := range h.cpus {
		ints += fmt.Sprintf("       CPU%d", c)
	}
	ints += "\n 38:"
	for _, v := range h.irq38 {
		ints += fmt.Sprintf(" %10d", v)
	}
	ints += " PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\nLOC:"
	for range h.cpus {
		ints += "          1"
	}
	ints += "   Local timer interrupts\n"
	stat := "cpu  1 0 1 1 0 0 1 0 0 0\n"
	for i, c := range h.cpus {
		s := h.stat[i]
		stat += fmt.Sprintf("cpu%d %d 0 0 %d 0 %d %d 0 0 0\n", c, s[2], s[1], h.irqTicks, s[0])
	}
	stat += "intr 0\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n"
	soft := "                    CPU0       CPU1       CPU2\n          HI: 0 0 0\n"
	soft += fmt.Sprintf("      NET_TX: 0 0 0\n      NET_RX: %d %d %d\n", h.netRX[0], h.netRX[1], h.netRX[2])
	sn := ""
	for i, c := range h.cpus {
		s := h.softnet[i]
		sn += fmt.Sprintf("%08x %08x %08x 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 %08x 00000000 00000000\n", s[0], s[1], s[2], c)
	}
	for p, c := range map[string]string{
		"proc/interrupts":                          ints,
		"proc/stat":                                stat,
		"proc/softirqs":                            soft,
		"proc/net/softnet_stat":                    sn,
		"proc/irq/38/effective_affinity_list":      "1\n",
		"sys/class/net/eth0/statistics/rx_packets": fmt.Sprint(h.rxPkts),
		"sys/class/net/eth0/statistics/tx_packets": "5",
		"sys/class/net/eth0/statistics/rx_bytes":   fmt.Sprint(h.rxPkts * 1500),
		"sys/class/net/eth0/statistics/tx_bytes":   "300",
		"sys/class/net/eth0/statistics/rx_dropped": "0",
	} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSamplerRatesWrapResetHotplug(t *testing.T) {
	root := t.TempDir()
	a := hostState{
		cpus:    []int{0, 1},
		irq38:   []uint64{0, 100},
		stat:    [][3]int{{0, 1000, 0}, {0, 1000, 0}},
		netRX:   []uint64{10, 4294967000, 0},
		softnet: [][3]uint32{{5, 0, 0}, {0xffffff00, 1, 2}},
		rxPkts:  1000,
	}
	a.write(t, root)
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	nic := nicinfo.NIC{Name: "eth0", Bus: nicinfo.BusPCI, PCI: &nicinfo.PCIFunction{Address: "0000:00:03.0", IRQs: []int{38}}}
	s, err := NewSampler(context.Background(), []nicinfo.NIC{nic}, option.Root(root), WithInterval(time.Millisecond), withClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	// Two seconds later CPU 2 has come online, CPU 1 spent 180 of 200
	// ticks in softirq, NET_RX and softnet wrapped.
	b := hostState{
		cpus:    []int{0, 1, 2},
		irq38:   []uint64{0, 2100, 50},
		stat:    [][3]int{{0, 1190, 10}, {180, 1020, 0}, {0, 5, 0}},
		netRX:   []uint64{10, 704, 3},
		softnet: [][3]uint32{{5, 0, 0}, {0x100, 3, 2}, {9, 9, 9}},
		rxPkts:  3000,
	}
	b.write(t, root)
	now = now.Add(2 * time.Second)
	x, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if x.IntervalS != 2 || x.IRQTimeAccounted {
		t.Fatalf("interval %v accounted %v", x.IntervalS, x.IRQTimeAccounted)
	}
	if len(x.CPUs) != 2 {
		t.Fatalf("CPUs = %+v (CPU 2 came online mid-interval and has no rate)", x.CPUs)
	}
	c1 := x.CPUs[1]
	if c1.IRQPct != nil || !near(c1.SoftIRQPct, 90) || !near(c1.BusyPct, 90) {
		t.Errorf("cpu1 pct = irq %v softirq %v busy %v", c1.IRQPct, c1.SoftIRQPct, c1.BusyPct)
	}
	if c1.NetRXPerS != 500 || c1.NICIRQsPerS != 1000 || c1.SoftnetProcessedPerS != 256 || c1.SoftnetDroppedPerS != 1 {
		t.Errorf("cpu1 rates = %+v", c1)
	}
	if !near(x.CPUs[0].BusyPct, 5) || x.CPUs[0].NetRXPerS != 0 {
		t.Errorf("cpu0 = %+v", x.CPUs[0])
	}
	n := x.NICs[0]
	if n.RXPacketsPerS != 1000 || n.RXBytesPerS != 1500000 || n.IRQsPerS != 1000 || len(n.Queues) != 1 {
		t.Fatalf("nic = %+v", n)
	}
	if q := n.Queues[0]; q.CPU != 1 || q.Kind != KindRX || q.IRQsPerS != 1000 {
		t.Errorf("queue = %+v", q)
	}

	// IRQ time accounting on; the IRQ re-requested (counts restart).
	c := b
	c.irqTicks = 20
	c.irq38 = []uint64{0, 40, 0}
	c.write(t, root)
	now = now.Add(time.Second)
	x, err = s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !x.IRQTimeAccounted || x.CPUs[0].IRQPct == nil {
		t.Errorf("accounted = %v", x.IRQTimeAccounted)
	}
	if got := x.NICs[0].IRQsPerS; got != 40 {
		t.Errorf("after reset irqs/s = %v, want 40 (counted from 0)", got)
	}
}

func TestSamplerCancel(t *testing.T) {
	root := t.TempDir()
	hostState{cpus: []int{0, 1}, irq38: []uint64{0, 0}, stat: [][3]int{{0, 1, 0}, {0, 1, 0}},
		netRX: []uint64{0, 0, 0}, softnet: [][3]uint32{{}, {}}}.write(t, root)
	s, err := NewSampler(context.Background(), nil, option.Root(root), WithInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Next(ctx); err != context.DeadlineExceeded {
		t.Errorf("Next on a done context = %v", err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestDelta32(t *testing.T) {
	for _, tc := range []struct{ prev, cur, want uint64 }{
		{10, 15, 5},
		{4294967290, 4, 10}, // wrapped
		{1000, 40, 40},      // reset: counted from 0
		{1 << 40, 5, 5},     // not a 32-bit value: reset
	} {
		if got := delta32(tc.prev, tc.cur); got != tc.want {
			t.Errorf("delta32(%d, %d) = %d, want %d", tc.prev, tc.cur, got, tc.want)
		}
	}
}

// A reading taken at the same instant as the previous one (or with the
// clock stepped back) has no rate: not counts × 10⁹.
func TestSamplerZeroInterval(t *testing.T) {
	root := t.TempDir()
	a := hostState{cpus: []int{0, 1}, irq38: []uint64{0, 100}, stat: [][3]int{{0, 1000, 0}, {0, 1000, 0}},
		netRX: []uint64{10, 20, 0}, softnet: [][3]uint32{{5, 0, 0}, {7, 0, 0}}, rxPkts: 1000}
	a.write(t, root)
	now := time.Unix(1000, 0)
	nic := nicinfo.NIC{Name: "eth0", Bus: nicinfo.BusPCI, PCI: &nicinfo.PCIFunction{Address: "0000:00:03.0", IRQs: []int{38}}}
	s, err := NewSampler(context.Background(), []nicinfo.NIC{nic}, option.Root(root), WithInterval(time.Millisecond),
		withClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []time.Duration{0, -time.Second} {
		a.irq38[1] += 50
		a.netRX[1] += 30
		a.softnet[1][0] += 30
		a.rxPkts += 40
		a.write(t, root)
		now = now.Add(step)
		x, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if x.IntervalS != 0 {
			t.Errorf("step %v: interval_s = %v, want 0", step, x.IntervalS)
		}
		for _, c := range x.CPUs {
			if c.NetRXPerS != 0 || c.NICIRQsPerS != 0 || c.SoftnetProcessedPerS != 0 || math.IsNaN(c.BusyPct) {
				t.Errorf("step %v: cpu%d rates over no time = %+v", step, c.CPU, c)
			}
		}
		if n := x.NICs[0]; n.IRQsPerS != 0 || n.RXPacketsPerS != 0 || n.Queues[0].IRQsPerS != 0 {
			t.Errorf("step %v: nic rates over no time = %+v", step, n)
		}
		if _, err := json.Marshal(x); err != nil {
			t.Errorf("step %v: %v", step, err)
		}
	}
}
