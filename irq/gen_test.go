package irq

import (
	"fmt"
	"strings"
)

// genInterrupts writes a /proc/interrupts for a large host. The layout is
// the real one of kernel 6.18 on x86 as captured in
// testdata/vm-2cpu-6.18-interrupts.txt (IO-APIC rows, then
// "PCI-MSIX-BDF  N-edge  action" rows, then the named arch rows), widened
// to ncpu columns and nirq MSI-X vectors of 16-queue NICs named
// ethK-TxRx-Q; counts are synthetic (genCount), not measured.
func genInterrupts(ncpu, nirq int) []byte {
	var b strings.Builder
	b.WriteString("      ")
	for c := 0; c < ncpu; c++ {
		fmt.Fprintf(&b, "%-11s", fmt.Sprintf("CPU%d", c))
	}
	b.WriteString("\n")
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&b, "%4d: ", 24+i-3)
		for c := 0; c < ncpu; c++ {
			fmt.Fprintf(&b, "%10d ", (i+c)%3)
		}
		fmt.Fprintf(&b, " IO-APIC   %d-edge      ACPI:Ged\n", 5+i)
	}
	for i := 0; i < nirq; i++ {
		nic, q := i/16, i%16
		fmt.Fprintf(&b, "%4d: ", 24+i)
		for c := 0; c < ncpu; c++ {
			fmt.Fprintf(&b, "%10d ", genCount(i, c))
		}
		fmt.Fprintf(&b, "PCI-MSIX-0000:%02x:00.%d  %2d-edge      eth%d-TxRx-%d\n", 1+nic/4, nic%4, q, nic, q)
	}
	for _, n := range []string{"NMI:Non-maskable interrupts", "LOC:Local timer interrupts", "RES:Rescheduling interrupts"} {
		name, desc, _ := strings.Cut(n, ":")
		fmt.Fprintf(&b, "%4s: ", name)
		for c := 0; c < ncpu; c++ {
			fmt.Fprintf(&b, "%10d ", c*7)
		}
		fmt.Fprintf(&b, "  %s\n", desc)
	}
	b.WriteString(" ERR:          0\n MIS:          0\n")
	return []byte(b.String())
}

// genCount: mostly zeros (as on a real host), the queue's own CPU busy.
func genCount(irq, cpu int) uint64 {
	if irq%128 == cpu {
		return uint64(irq)*1000003 + uint64(cpu)
	}
	if (irq+cpu)%17 == 0 {
		return uint64(irq + cpu)
	}
	return 0
}
