package irq

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// TestNextIntoMatchesNext samples the large host of BenchmarkSample with
// two samplers, one through Next (a new Sample each time) and one through
// NextInto into the same Sample, while its counters move: the samples are
// the same, NextInto writes through the pointers it handed out before
// (storage reused), a sample Next returned is not changed by later ones,
// and a steady-state NextInto allocates nothing.
func TestNextIntoMatchesNext(t *testing.T) {
	ctx := context.Background()
	root, addrs := benchHost(t)
	nics, err := nicinfo.List(ctx, option.Root(root), nicinfo.WithEthtool(nil))
	if err != nil || len(nics) != benchNICs {
		t.Fatalf("%d NICs, %v", len(nics), err)
	}
	newSampler := func() *Sampler {
		now := time.Unix(1_000_000, 0)
		s, err := NewSampler(ctx, nics, option.Root(root), WithPCIe(addrs...),
			withClock(func() time.Time { now = now.Add(time.Second); return now }))
		if err != nil {
			t.Fatal(err)
		}
		s.Watch(benchWatchPID)
		t.Cleanup(func() { s.Close() })
		return s
	}
	fresh, reused := newSampler(), newSampler()
	stat, err := os.ReadFile(filepath.Join(root, "proc", "stat"))
	if err != nil {
		t.Fatal(err)
	}
	ints, err := os.ReadFile(filepath.Join(root, "proc", "interrupts"))
	if err != nil {
		t.Fatal(err)
	}
	var into Sample
	var kept []Sample
	var keptJSON []string
	var irqPct *float64
	for step := 1; step <= 4; step++ {
		// CPU 5 works, eth0 receives, queue eth1-TxRx-8 (IRQ 48, vector
		// 24, on CPU 24) interrupts, each more at every step.
		s := strings.Replace(string(stat), "cpu5 1000185 0", "cpu5 "+strconv.Itoa(1000185+100*step)+" 0", 1)
		write(t, root, "proc/stat", s)
		n := strconv.Itoa(24*1000003 + 24 + 500*step)
		write(t, root, "proc/interrupts", strings.Replace(string(ints), strconv.Itoa(24*1000003+24), pad10(n), 1))
		write(t, root, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/net/eth0/statistics/rx_packets", strconv.Itoa(1000003+1000*step)+"\n")

		x, err := fresh.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := reused.NextInto(ctx, &into); err != nil {
			t.Fatal(err)
		}
		a, b := asJSONString(t, x), asJSONString(t, into)
		if a != b {
			t.Fatalf("step %d: Next\n%s\nNextInto\n%s", step, a, b)
		}
		eth0, eth1 := nicRate(t, x, "eth0"), nicRate(t, x, "eth1")
		if step > 1 && (eth0.RXPacketsPerS != 1000 || x.CPUs[5].UserPct <= 0 || eth1.Queues[8].IRQ != 48 || eth1.Queues[8].IRQsPerS != 500 || eth1.Queues[8].CPU != 24) {
			t.Fatalf("step %d: counters did not move: eth0 %v pkt/s, cpu5 user %v%%, IRQ 48 %+v", step,
				eth0.RXPacketsPerS, x.CPUs[5].UserPct, eth1.Queues[8])
		}
		if p := into.CPUs[0].IRQPct; irqPct != nil && p != irqPct {
			t.Errorf("step %d: IRQPct storage not reused", step)
		} else {
			irqPct = p
		}
		kept, keptJSON = append(kept, x), append(keptJSON, a)
	}
	for i, x := range kept {
		if asJSONString(t, x) != keptJSON[i] {
			t.Errorf("sample %d changed after later samples", i)
		}
	}
	if n := testing.AllocsPerRun(10, func() {
		if err := reused.NextInto(ctx, &into); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("steady-state NextInto: %v allocations", n)
	}
}

// TestNextIntoWaitAllocatesNothing: NextInto's wait for the interval (a
// real clock, 1 ms) reuses its timer.
func TestNextIntoWaitAllocatesNothing(t *testing.T) {
	root := t.TempDir()
	hostState{cpus: []int{0, 1}, irq38: []uint64{0, 0}, stat: [][3]int{{0, 1, 0}, {0, 1, 0}},
		netRX: []uint64{0, 0, 0}, softnet: [][3]uint32{{}, {}}}.write(t, root)
	for _, f := range []string{"rx_missed_errors", "rx_fifo_errors", "rx_over_errors", "tx_dropped"} {
		write(t, root, "sys/class/net/eth0/statistics/"+f, "0\n") // as sysfs has them: no file to look for again
	}
	nic := nicinfo.NIC{Name: "eth0", Bus: nicinfo.BusPCI, PCI: &nicinfo.PCIFunction{Address: "0000:00:03.0", IRQs: []int{38}}}
	s, err := NewSampler(context.Background(), []nicinfo.NIC{nic}, option.Root(root), WithInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var x Sample
	next := func() {
		if err := s.NextInto(context.Background(), &x); err != nil {
			t.Fatal(err)
		}
	}
	next()
	start := time.Now()
	if n := testing.AllocsPerRun(20, next); n != 0 {
		t.Errorf("NextInto with a wait: %v allocations", n)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Errorf("21 samples 1 ms apart took %v: no wait", el)
	}
}

func nicRate(t *testing.T, x Sample, name string) NICRate {
	t.Helper()
	for _, n := range x.NICs {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no %s", name)
	return NICRate{}
}

func write(t *testing.T, root, p, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pad10 right-aligns s in 10 columns, as /proc/interrupts prints a count.
func pad10(s string) string { return strings.Repeat(" ", max(0, 10-len(s))) + s }

func asJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
