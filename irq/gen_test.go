package irq

import (
	"fmt"
	"strconv"
	"strings"
)

// genInterrupts writes a /proc/interrupts for a large host. The layout is
// the real one of kernel 6.18 on x86 as captured in
// testdata/vm-2cpu-6.18-interrupts.txt (IO-APIC rows, then
// "PCI-MSIX-BDF  N-edge  action" rows, then the named arch rows), widened
// to ncpu columns and nirq MSI-X vectors of 16-queue NICs named
// ethK-TxRx-Q; counts are synthetic (genCount), not measured.
func genInterrupts(ncpu, nirq int) []byte {
	b := make([]byte, 0, (nirq+8)*(11*ncpu+64))
	b = append(b, "      "...)
	for c := 0; c < ncpu; c++ {
		n := len(b)
		b = strconv.AppendInt(append(b, "CPU"...), int64(c), 10)
		for range 11 - (len(b) - n) { // %-11s
			b = append(b, ' ')
		}
	}
	b = append(b, '\n')
	row := func(label string, width int, count func(c int) uint64) {
		b = padInt(b, label, width)
		b = append(b, ": "...)
		for c := 0; c < ncpu; c++ {
			b = padInt(b, strconv.FormatUint(count(c), 10), 10)
			b = append(b, ' ')
		}
	}
	for i := 0; i < 3; i++ {
		row(strconv.Itoa(24+i-3), 4, func(c int) uint64 { return uint64((i + c) % 3) })
		b = fmt.Appendf(b, " IO-APIC   %d-edge      ACPI:Ged\n", 5+i)
	}
	for i := 0; i < nirq; i++ {
		nic, q := i/16, i%16
		row(strconv.Itoa(24+i), 4, func(c int) uint64 { return genCount(i, c) })
		b = fmt.Appendf(b, "PCI-MSIX-0000:%02x:00.%d  %2d-edge      eth%d-TxRx-%d\n", 1+nic/4, nic%4, q, nic, q)
	}
	for _, n := range []string{"NMI:Non-maskable interrupts", "LOC:Local timer interrupts", "RES:Rescheduling interrupts"} {
		name, desc, _ := strings.Cut(n, ":")
		row(name, 4, func(c int) uint64 { return uint64(c * 7) })
		b = fmt.Appendf(b, "  %s\n", desc)
	}
	b = append(b, " ERR:          0\n MIS:          0\n"...)
	return b
}

// padInt appends s right-aligned in width columns (%*s).
func padInt(b []byte, s string, width int) []byte {
	for i := len(s); i < width; i++ {
		b = append(b, ' ')
	}
	return append(b, s...)
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

// genStat writes a /proc/stat for ncpu online CPUs as kernel 6.x does: the
// total and per-CPU time lines (10 fields, ticks), the intr line with one
// count per interrupt number (nintr of them: nr_irqs, mostly zeros), and
// the counter lines. Counts are synthetic.
func genStat(ncpu, nintr int) []byte {
	var b strings.Builder
	line := func(name string, c int) {
		fmt.Fprintf(&b, "%s %d %d %d %d %d %d %d %d 0 0\n", name, 1000000+c*37, c%5, 200000+c*11, 90000000+c*101, 300+c, 1000+c*3, 5000+c*7, c%3)
	}
	line("cpu ", 0)
	for c := 0; c < ncpu; c++ {
		line(fmt.Sprintf("cpu%d", c), c)
	}
	fmt.Fprintf(&b, "intr %d", 123456789)
	for i := 0; i < nintr; i++ {
		if i%7 == 0 {
			fmt.Fprintf(&b, " %d", i*1013)
		} else {
			b.WriteString(" 0")
		}
	}
	b.WriteString("\nctxt 987654321\nbtime 1700000000\nprocesses 123456\nprocs_running 3\nprocs_blocked 0\n")
	b.WriteString("softirq 99999999 10 2000000 30000 4000000 50000 0 600 7000000 80 9000000\n")
	return []byte(b.String())
}

// genSoftirqs writes a /proc/softirqs for ncpu possible CPUs in the
// kernel's layout (show_softirqs: "CPU%-8d" headers, "%12s:" names, " %10u"
// counts).
func genSoftirqs(ncpu int) []byte {
	var b strings.Builder
	b.WriteString("                    ")
	for c := 0; c < ncpu; c++ {
		fmt.Fprintf(&b, "CPU%-8d", c)
	}
	b.WriteString("\n")
	for i, n := range []string{"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"} {
		fmt.Fprintf(&b, "%12s:", n)
		for c := 0; c < ncpu; c++ {
			fmt.Fprintf(&b, " %10d", (i*1000003+c*7919)%100000000)
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// genSoftnet writes a /proc/net/softnet_stat for ncpu online CPUs as Linux
// 5.10+ does: 13 hex columns, the CPU id last.
func genSoftnet(ncpu int) []byte {
	var b strings.Builder
	for c := 0; c < ncpu; c++ {
		fmt.Fprintf(&b, "%08x %08x %08x 00000000 00000000 00000000 00000000 00000000 00000000 %08x %08x %08x %08x\n",
			c*100003, c%3, c*7, c*11, c%2, 0, c)
	}
	return []byte(b.String())
}
