package nicdiag

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
)

// numaTree is the E810 on NUMA node 1 (local CPUs 64-127 of 128) with a
// /proc/interrupts in the kernel's layout for its 65 MSI-X vectors (misc
// at 300, ice-enp162s0f0-TxRx-N at 301+N, the snapshot's msi_irqs) and
// each queue IRQ's effective CPU from cpuOf. The interrupt counts are
// made up; the layout is the kernel's.
func numaTree(t *testing.T, cpuOf func(q int) int) string {
	dir := snaptest.Copy(t, snaps+"e810-ice-numa1")
	var b strings.Builder
	b.WriteString("    ")
	for c := 0; c < 128; c++ {
		fmt.Fprintf(&b, "      CPU%-4d", c)
	}
	b.WriteString("\n")
	files := map[string]string{}
	for irq := 300; irq <= 364; irq++ {
		fmt.Fprintf(&b, "%4d:", irq)
		for c := 0; c < 128; c++ {
			b.WriteString("          0")
		}
		name, cpu := "ice-0000:a2:00.0:misc", 64
		if q := irq - 301; q >= 0 {
			name, cpu = fmt.Sprintf("ice-enp162s0f0-TxRx-%d", q), cpuOf(q)
		}
		fmt.Fprintf(&b, "  IR-PCI-MSIX-0000:a2:00.0 %d-edge      %s\n", irq-300, name)
		files[fmt.Sprintf("proc/irq/%d/effective_affinity_list", irq)] = fmt.Sprintf("%d\n", cpu)
		files[fmt.Sprintf("proc/irq/%d/smp_affinity_list", irq)] = "0-127\n"
	}
	files["proc/interrupts"] = b.String()
	snaptest.Add(t, dir, files)
	return dir
}

func TestNUMARemoteQueues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cpuOf func(q int) int
		want  finding.Severity // -1: no finding
		count string
	}{
		{"every queue on node 0", func(q int) int { return q }, finding.Warn, "64"},
		{"a quarter on node 0", func(q int) int {
			if q < 16 {
				return q
			}
			return 64 + q
		}, finding.Info, "16"},
		{"every queue on its own node", func(q int) int { return 64 + q }, -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Check(context.Background(), option.Root(numaTree(t, tc.cpuOf)), WithInterfaces("enp162s0f0"))
			if err != nil {
				t.Fatal(err)
			}
			var got *finding.Finding
			for i := range r.Findings {
				if r.Findings[i].Code == finding.IRQNUMARemote {
					got = &r.Findings[i]
				}
			}
			switch {
			case tc.want < 0 && got != nil:
				t.Fatalf("unexpected %s", got)
			case tc.want < 0:
				return
			case got == nil:
				t.Fatalf("no irq.numa_remote in %v", r.Findings)
			}
			if got.Severity != tc.want || got.Subject != "enp162s0f0" || got.Evidence["remote_count"] != tc.count ||
				got.Evidence["data_queues"] != "64" || got.Evidence["local_cpus"] != "64-127" || got.Evidence["numa_node"] != "1" {
				t.Errorf("%s %+v", got, got.Evidence)
			}
			if !strings.Contains(got.Evidence["remote_irqs"], "301 (ice-enp162s0f0-TxRx-0) on CPU 0") {
				t.Errorf("remote irqs %q", got.Evidence["remote_irqs"])
			}
		})
	}
}

// One NUMA node, or none known: nothing can be remote.
func TestNUMARemoteNeedsTwoNodes(t *testing.T) {
	for _, snap := range []string{"82576-minipcie-x1", "xeon-i350-sriov-bcm5709", "virtio-kvm"} {
		r, err := Check(context.Background(), option.Root(snaps+snap))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Findings {
			if f.Code == finding.IRQNUMARemote {
				t.Errorf("%s: %s", snap, f)
			}
		}
	}
}
