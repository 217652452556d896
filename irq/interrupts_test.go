package irq

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

func mustParse(t testing.TB, s string) *Interrupts {
	t.Helper()
	x := new(Interrupts)
	if err := ParseInterrupts([]byte(s), x); err != nil {
		t.Fatal(err)
	}
	return x
}

func row(t testing.TB, x *Interrupts, name string) (Line, []uint64) {
	t.Helper()
	for i, l := range x.Lines {
		if l.Name == name {
			return l, x.Counts(i)
		}
	}
	t.Fatalf("no row %q", name)
	return Line{}, nil
}

func TestParseInterruptsIwlwifiLaptop(t *testing.T) {
	b, err := os.ReadFile("testdata/iwlwifi-interrupts.txt")
	if err != nil {
		t.Fatal(err)
	}
	x := mustParse(t, string(b))
	if got := x.CPUs; len(got) != 4 || got[3] != 3 {
		t.Fatalf("CPUs = %v", got)
	}
	l, c := row(t, x, "46")
	if l.IRQ != 46 || l.Chip != "IR-PCI-MSI" || l.Trigger != "edge" || l.Actions != "iwlwifi" {
		t.Errorf("row 46 = %+v", l)
	}
	if c[0] != 43078464 || c[1] != 130 || c[2] != 460171 || c[3] != 290 {
		t.Errorf("row 46 counts = %v", c)
	}
	l, _ = row(t, x, "16")
	if got := l.ActionNames(); len(got) != 2 || got[0] != "ehci_hcd:usb1" || got[1] != "mmc0" {
		t.Errorf("shared row actions = %q", got)
	}
	l, c = row(t, x, "ERR")
	if l.IRQ != -1 || l.Columns != 1 || c[0] != 0 {
		t.Errorf("ERR = %+v %v", l, c)
	}
	l, _ = row(t, x, "LOC")
	if l.Actions != "Local timer interrupts" || l.Columns != 4 {
		t.Errorf("LOC = %+v", l)
	}
}

func TestParseInterruptsVirtioLayouts(t *testing.T) {
	for _, tc := range []struct {
		file, row, chip, hwirq, action string
		counts                         []uint64
	}{
		{"testdata/virtio4-interrupts.txt", "36", "PCI-MSI", "16385", "virtio0-input.0", []uint64{0, 335, 37, 0}},
		{"testdata/virtio4-interrupts.txt", "0", "IO-APIC", "2", "timer", []uint64{49, 0, 0, 0}},
		{"testdata/vm-2cpu-6.18-interrupts.txt", "38", "PCI-MSIX-0000:00:03.0", "1", "virtio2-input.0", nil},
		{"testdata/vm-2cpu-6.18-interrupts.txt", "24", "IO-APIC", "5", "ACPI:Ged", nil},
	} {
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		x := mustParse(t, string(b))
		l, c := row(t, x, tc.row)
		if l.Chip != tc.chip || l.HWIRQ != tc.hwirq || l.Actions != tc.action || l.Trigger != "edge" {
			t.Errorf("%s row %s = %+v", tc.file, tc.row, l)
		}
		for i, want := range tc.counts {
			if c[i] != want {
				t.Errorf("%s row %s counts = %v, want %v", tc.file, tc.row, c, tc.counts)
				break
			}
		}
	}
}

// A file written with CPU 1 offline: the header skips it, and the counts
// must land on CPUs 0, 2 and 3. Layout: x86 6.x; names with spaces as
// iwlwifi's MSI-X vectors are named; an arm64 GIC row with "Level".
const offlineCPU = `           CPU0       CPU2       CPU3
  0:         49          0          7   IO-APIC   2-edge      timer
 50:          1          2 4294967290  PCI-MSIX-0000:02:00.0   0-edge      iwlwifi: default queue
 51:         10         20         30  PCI-MSIX-0000:02:00.0   1-edge      iwlwifi: queue 1
 11:          5          6          7     GICv3  27 Level     arch_timer
NMI:          0          0          0   Non-maskable interrupts
ERR:          3
`

func TestParseInterruptsOfflineCPUAndSpaces(t *testing.T) {
	x := mustParse(t, offlineCPU)
	if len(x.CPUs) != 3 || x.CPUs[1] != 2 {
		t.Fatalf("CPUs = %v", x.CPUs)
	}
	l, c := row(t, x, "50")
	if l.Actions != "iwlwifi: default queue" || c[2] != 4294967290 || l.HWIRQ != "0" {
		t.Errorf("row 50 = %+v %v", l, c)
	}
	l, c = row(t, x, "11")
	if l.Chip != "GICv3" || l.HWIRQ != "27" || l.Trigger != "Level" || l.Actions != "arch_timer" || c[1] != 6 {
		t.Errorf("GIC row = %+v %v", l, c)
	}
	if i := x.Index(51); i < 0 || x.Lines[i].Actions != "iwlwifi: queue 1" {
		t.Errorf("Index(51) = %d", i)
	}
	if i := x.Index(11); i < 0 || x.Lines[i].Chip != "GICv3" {
		t.Errorf("Index(11) on an unsorted file = %d", i)
	}
	if x.Index(999) != -1 {
		t.Error("Index(999) found something")
	}
}

func TestParseInterruptsErrors(t *testing.T) {
	for name, in := range map[string]string{
		"empty":         "",
		"no header":     "  0:  1 2 IO-APIC 2-edge timer\n",
		"bad header":    "CPU0 CPUx\n",
		"no colon":      "  CPU0\n  0 12 timer\n",
		"no counts":     "  CPU0\n  0: IO-APIC 2-edge timer\n",
		"overflow":      "  CPU0\n  0: 99999999999999999999999 x\n",
		"header desc":   "  CPU1 CPU0\n",
		"label spaces":  "  CPU0\n a b: 1\n",
		"truncated hdr": "           CP",
	} {
		err := ParseInterrupts([]byte(in), new(Interrupts))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v is not ErrMalformed", name, err)
		}
	}
}

// A truncated last row (a read cut mid-line) keeps the counts it has.
func TestParseInterruptsTruncatedRow(t *testing.T) {
	x := mustParse(t, "  CPU0  CPU1\n  5:   7   8  IO-APIC 2-edge t\n  6:   9")
	l, c := row(t, x, "6")
	if l.Columns != 1 || c[0] != 9 || c[1] != 0 {
		t.Errorf("truncated row = %+v %v", l, c)
	}
}

// Files over 1 MiB (procfs stops there): every row is read.
func TestParseInterruptsLarge(t *testing.T) {
	b := genInterrupts(256, 2048)
	if len(b) <= 1<<20 {
		t.Fatalf("generated only %d bytes", len(b))
	}
	x := mustParse(t, string(b))
	if len(x.CPUs) != 256 {
		t.Fatalf("%d CPUs", len(x.CPUs))
	}
	last := -1
	for _, l := range x.Lines {
		if l.IRQ > last {
			last = l.IRQ
		}
	}
	if last != 24+2047 {
		t.Errorf("last IRQ = %d", last)
	}
	l, c := row(t, x, "2071")
	if !strings.HasPrefix(l.Actions, "eth") || c[255] != genCount(2047, 255) {
		t.Errorf("last row = %+v, cpu255 %d want %d", l, c[255], genCount(2047, 255))
	}
}

func TestParseInterruptsReuseAllocatesNothing(t *testing.T) {
	b := genInterrupts(128, 1000)
	x := new(Interrupts)
	if err := ParseInterrupts(b, x); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if err := ParseInterrupts(b, x); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("steady-state parse allocates %v times", allocs)
	}
	// A changed layout must not keep stale names.
	b2 := []byte(strings.Replace(string(b), "eth0-TxRx-0", "eth9-TxRx-0", 1))
	if err := ParseInterrupts(b2, x); err != nil {
		t.Fatal(err)
	}
	if l, _ := row(t, x, "24"); l.Actions != "eth9-TxRx-0" {
		t.Errorf("after layout change row 24 = %q", l.Actions)
	}
}

// Counts written as the kernel writes them (" %10u", wider when they need
// it) come back exactly, whichever path of parseCounts reads them.
func TestParseCountsKernelFormat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := []uint64{0, 0, 0, 7, 9, 10, 12345, 9999999999, 10000000000, 18446744073709551615}
	for trial := 0; trial < 200; trial++ {
		ncpu := 1 + rng.IntN(40)
		var b strings.Builder
		b.WriteString("    ")
		for c := 0; c < ncpu; c++ {
			fmt.Fprintf(&b, "CPU%-8d", c)
		}
		b.WriteString("\n")
		want := make([][]uint64, 5)
		for r := range want {
			fmt.Fprintf(&b, "%3d:", 30+r)
			for c := 0; c < ncpu; c++ {
				v := values[rng.IntN(len(values))]
				want[r] = append(want[r], v)
				fmt.Fprintf(&b, " %10d", v)
			}
			if r%2 == 0 {
				b.WriteString("  PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0")
			}
			b.WriteString("\n")
		}
		var x Interrupts
		if err := ParseInterrupts([]byte(b.String()), &x); err != nil {
			t.Fatalf("trial %d: %v\n%s", trial, err, b.String())
		}
		for r := range want {
			if got := x.Counts(r); !slices.Equal(got, want[r]) {
				t.Fatalf("trial %d row %d: got %v, want %v\n%s", trial, r, got, want[r], b.String())
			}
		}
	}
}

// Chip names may hold a space (RISC-V "RISC-V INTC", "SiFive PLIC"); the
// hwirq and trigger after them must not end up in the action names.
func TestParseInterruptsChipWithSpace(t *testing.T) {
	x := mustParse(t, `           CPU0       CPU1
  5:       1234       5678  RISC-V INTC   5 Edge      riscv-timer
 33:          7          0  SiFive PLIC  33 Edge      virtio0-input.0, virtio0-output.0
 40:          1          2  PCI-MSIX-0000:00:03.0   1-edge      eth0 rx
 41:          1          2  XT-PIC  timer
`)
	for _, tc := range []struct{ name, chip, hwirq, trigger, actions string }{
		{"5", "RISC-V INTC", "5", "Edge", "riscv-timer"},
		{"33", "SiFive PLIC", "33", "Edge", "virtio0-input.0, virtio0-output.0"},
		{"40", "PCI-MSIX-0000:00:03.0", "1", "edge", "eth0 rx"},
		{"41", "XT-PIC", "", "", "timer"},
	} {
		l, _ := row(t, x, tc.name)
		if l.Chip != tc.chip || l.HWIRQ != tc.hwirq || l.Trigger != tc.trigger || l.Actions != tc.actions {
			t.Errorf("row %s = chip %q hwirq %q trigger %q actions %q; want %q %q %q %q", tc.name,
				l.Chip, l.HWIRQ, l.Trigger, l.Actions, tc.chip, tc.hwirq, tc.trigger, tc.actions)
		}
	}
}
