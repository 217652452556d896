package irq

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/option"
)

// aerFile renders an AER statistics file as Linux 6.x writes it, with the
// total on its last line.
func aerFile(total string, first string, n uint64) string {
	return fmt.Sprintf("%s %d\nBadTLP 0\n%s %d\n", first, n, total, n)
}

// pciFunction writes a PCI function's sysfs directory under root, the
// device under /sys/devices and /sys/bus/pci/devices/ADDR a relative link
// to it as in sysfs; files maps attribute names to contents.
func pciFunction(t *testing.T, root, addr string, files map[string]string) {
	t.Helper()
	dev := filepath.Join(root, "sys/devices/pci0000:00/0000:00:01.0", addr)
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, c := range files {
		if err := os.WriteFile(filepath.Join(dev, name), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "sys/bus/pci/devices", addr)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); err != nil {
		if err := os.Symlink("../../../devices/pci0000:00/0000:00:01.0/"+addr, link); err != nil {
			t.Fatal(err)
		}
	}
}

func nicFunction(gts, width string, cor, nonfatal, fatal uint64) map[string]string {
	return map[string]string{
		"current_link_speed":  gts,
		"current_link_width":  width,
		"max_link_speed":      "8.0 GT/s PCIe\n",
		"max_link_width":      "8\n",
		"aer_dev_correctable": aerFile("TOTAL_ERR_COR", "RxErr", cor),
		"aer_dev_nonfatal":    aerFile("TOTAL_ERR_NONFATAL", "DLP", nonfatal),
		"aer_dev_fatal":       aerFile("TOTAL_ERR_FATAL", "DLP", fatal),
	}
}

func aerN(v uint64) *uint64 { return &v }

func TestSamplerPCIe(t *testing.T) {
	const nic, conv = "0000:01:00.0", "0000:00:1f.6"
	root := t.TempDir()
	hostState{cpus: []int{0, 1}, irq38: []uint64{0, 0}, stat: [][3]int{{0, 1, 0}, {0, 1, 0}},
		netRX: []uint64{0, 0, 0}, softnet: [][3]uint32{{}, {}}}.write(t, root)
	pciFunction(t, root, nic, nicFunction("8.0 GT/s PCIe\n", "8\n", 10, 0, 3))
	pciFunction(t, root, conv, map[string]string{"vendor": "0x8086\n"}) // conventional PCI: no link or AER files
	now := time.Unix(1000, 0)
	s, err := NewSampler(context.Background(), nil, option.Root(root), WithInterval(time.Millisecond),
		withClock(func() time.Time { return now }),
		WithPCIe("01:00.0", conv, "0000:05:00.0", "bogus"))
	if err != nil {
		t.Fatal(err)
	}

	// The link retrains to 2.5 GT/s x4 under load; 7 correctable errors
	// and one nonfatal; the fatal counter went down from 3 to 2 (the
	// function was removed and added again), so it counts from 0.
	pciFunction(t, root, nic, nicFunction("2.5 GT/s PCIe\n", "4\n", 17, 1, 2))
	now = now.Add(time.Second)
	x, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []PCIeState{
		{Address: nic, GTs: 2.5, Width: 4, AERCorrectable: aerN(7), AERNonFatal: aerN(1), AERFatal: aerN(2)},
		{Address: conv},
		{Address: "0000:05:00.0", Error: "pcie: no such PCI function: 0000:05:00.0"},
		{Address: "bogus", Error: `pcie: not a PCI address: "bogus"`},
	}
	if got, w := js(t, x.PCIe), js(t, want); got != w {
		t.Errorf("pcie\n got %s\nwant %s", got, w)
	}

	// A reading finds the function without its AER files, the next
	// finds it removed: neither fails the sample.
	for _, f := range []string{"aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal"} {
		os.Remove(filepath.Join(root, "sys/devices/pci0000:00/0000:00:01.0", nic, f))
	}
	now = now.Add(time.Second)
	if x, err = s.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, w := js(t, x.PCIe[0]), js(t, PCIeState{Address: nic, GTs: 2.5, Width: 4}); got != w {
		t.Errorf("without AER files: %s, want %s", got, w)
	}
	if err := os.RemoveAll(filepath.Join(root, "sys/devices/pci0000:00/0000:00:01.0", nic)); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	if x, err = s.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := x.PCIe[0]; st.Error != "pcie: no such PCI function: "+nic || st.GTs != 0 || st.AERCorrectable != nil {
		t.Errorf("removed: %+v", st)
	}
	if len(x.CPUs) != 2 {
		t.Errorf("the sample stands: %+v", x)
	}
}

// A malformed attribute is named in Error; the rest is still read.
func TestSamplerPCIeMalformed(t *testing.T) {
	root := t.TempDir()
	f := nicFunction("fast\n", "8\n", 1, 0, 0)
	f["aer_dev_fatal"] = "TOTAL_ERR_FATAL x\n"
	f["aer_dev_nonfatal"] = "DLP 0\n"
	pciFunction(t, root, "0000:01:00.0", f)
	st := pcieStates(nil, []pciRead{readPCIFunction(newOptions([]Option{option.Root(root)}).root, "0000:01:00.0", new([]byte))})[0]
	for _, want := range []string{
		`current_link_speed: pcie: malformed link speed: "fast"`,
		"aer_dev_nonfatal: pcie: malformed AER counters: no TOTAL_ERR_NONFATAL line",
		"aer_dev_fatal: pcie: malformed AER counters: line 1: count is not a decimal number",
	} {
		if !strings.Contains(st.Error, want) {
			t.Errorf("error %q lacks %q", st.Error, want)
		}
	}
	if st.Width != 8 || st.GTs != 0 {
		t.Errorf("state %+v", st)
	}
}

func TestSummarizePCIe(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(i int, st ...PCIeState) Sample {
		return Sample{Time: t0.Add(time.Duration(i) * time.Second), IntervalS: 1, PCIe: st}
	}
	const a, b = "0000:01:00.0", "0000:02:00.0"
	samples := []Sample{
		at(1, PCIeState{Address: a, GTs: 8, Width: 8, AERCorrectable: aerN(2)}, PCIeState{Address: b, GTs: 16, Width: 4}),
		at(2, PCIeState{Address: a, GTs: 2.5, Width: 4, AERCorrectable: aerN(5), AERFatal: aerN(0)}, PCIeState{Address: b, GTs: 16, Width: 4}),
		at(3, PCIeState{Address: a, GTs: 5, Width: 8}, PCIeState{Address: b, Error: "pcie: no such PCI function: " + b}),
	}
	want := []PCIeSummary{
		{Address: a, StartGTs: 8, StartWidth: 8, MinGTs: 2.5, MinWidth: 4, MaxGTs: 8, MaxWidth: 8, EndGTs: 5, EndWidth: 8,
			AERCorrectable: aerN(7), AERFatal: aerN(0), ReadSamples: 3},
		{Address: b, StartGTs: 16, StartWidth: 4, MinGTs: 16, MinWidth: 4, MaxGTs: 16, MaxWidth: 4, EndGTs: 16, EndWidth: 4,
			ReadSamples: 2, Error: "pcie: no such PCI function: " + b},
	}
	if got, w := js(t, Summarize(samples).PCIe), js(t, want); got != w {
		t.Errorf("summary\n got %s\nwant %s", got, w)
	}
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSummarizePCIeLinkWithAERError: a sample whose AER file failed but
// whose link was read counts for the link (as the run verdict has it),
// and its error is kept.
func TestSummarizePCIeLinkWithAERError(t *testing.T) {
	const a = "0000:01:00.0"
	samples := []Sample{
		{IntervalS: 1, PCIe: []PCIeState{{Address: a, GTs: 2.5, Width: 1}}},
		{IntervalS: 1, PCIe: []PCIeState{{Address: a, GTs: 5, Width: 1, Error: "aer_dev_fatal: malformed"}}},
	}
	got := SummarizePCIe(samples)
	if len(got) != 1 || got[0].ReadSamples != 2 || got[0].MaxGTs != 5 || got[0].EndGTs != 5 || got[0].Error != "aer_dev_fatal: malformed" {
		t.Errorf("summary %+v", got)
	}
}
