package report

import (
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/monitor"
)

// oneQueueRun is the recorded run of one flow on one of the X722's eight
// queues: CPU 3 full of packet work, CPU 5 of the receiving iperf3's
// system and user time, the others idle.
const oneQueueRun = "x722-one-flow-one-queue.jsonl"

// TestBusyShares: a CPU's bar is split into its packet work, the run's
// system and user time, other processes' (taken out of user and system in
// proportion) and steal, never past 100 %.
func TestBusyShares(t *testing.T) {
	other := 30.0
	got := busyShares(monitor.CPULoad{PacketPct: 20, SystemPct: 40, UserPct: 20, StealPct: 10, OtherPct: &other})
	want := [5]float64{20, 40 * 0.5, 20 * 0.5, 30, 10}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Fatalf("shares %v, want %v", got, want)
		}
	}
	over := busyShares(monitor.CPULoad{PacketPct: 90, SystemPct: 30, StealPct: 30})
	if sum := over[0] + over[1] + over[2] + over[3] + over[4]; math.Abs(sum-100) > 1e-9 {
		t.Errorf("shares %v add up to %v", over, sum)
	}
}

// TestBusyChart: the busy chart of a recorded run marks the CPU the
// verdict names, draws each CPU's packet work as long as its share, and
// writes the verdict's evidence beside it; a verdict without CPU load has
// no chart.
func TestBusyChart(t *testing.T) {
	rec := readRun(t, oneQueueRun)
	c, ok := busyChart(rec.Verdict)
	if !ok || c.ID != "busy" {
		t.Fatal("no busy chart")
	}
	wellFormed(t, "the busy chart", c.SVG)
	if !strings.Contains(c.SVG, `class="t">CPU 3 ▶</text>`) {
		t.Error("CPU 3, which bound the run, is not marked")
	}
	// CPU 3's packet work: 98 % of the plot's width, on its row.
	m := regexp.MustCompile(`<rect class="part-0" x="([0-9.]+)" y="(\d+)" width="([0-9.]+)"`).FindAllStringSubmatch(c.SVG, -1)
	found := false
	for _, r := range m {
		y, _ := strconv.Atoi(r[2])
		w, _ := strconv.ParseFloat(r[3], 64)
		if y == plotTop+3*rowHeight(8) {
			found = true
			if math.Abs(w-0.98*plotW) > 1 {
				t.Errorf("CPU 3's irq+softirq is %.1f px wide, want %.1f", w, 0.98*plotW)
			}
		}
	}
	if !found {
		t.Errorf("no irq+softirq part on CPU 3's row: %v", m)
	}
	if !strings.Contains(c.SVG, "CPU 3: 98 % irq+softirq") || !strings.Contains(c.SVG, "Verdict: core.") {
		t.Error("the verdict's evidence is not beside the chart")
	}
	if _, ok := busyChart(&monitor.Verdict{Bound: monitor.BoundUnknown}); ok {
		t.Error("a chart without CPUs")
	}
}

// TestRefLabelsApart: eight ceilings within a few Mb/s of each other get
// labels at least a line apart, all inside the plot, none cut short; a
// CPU's ceiling is a bar, never a line.
func TestRefLabelsApart(t *testing.T) {
	var refs []refLine
	for i := range 8 {
		v := 1000 + float64(i)
		refs = append(refs, refLine{v: v, label: "ethernet " + strconv.Itoa(int(v)) + " Mb/s, 99 % reached", tip: "x"})
	}
	refs[0].v = 5 // and one far below
	c := &lineChart{kind: "k", title: "t", total: 10, refs: refs,
		series: []series{{name: "rx", color: "#000", pts: []cell{{0, 1, 900}}}},
		shares: []shareBar{{name: "core CPU 0", share: 0.5, label: "50 %"}}, sharesTop: "CPU ceilings"}
	svg := c.svg()
	wellFormed(t, "the chart", svg)
	var ys []float64
	for _, m := range regexp.MustCompile(`<text class="ref-label" x="\d+" y="([0-9.]+)"`).FindAllStringSubmatch(svg, -1) {
		y, _ := strconv.ParseFloat(m[1], 64)
		ys = append(ys, y)
	}
	if len(ys) != 8 {
		t.Fatalf("%d labels for 8 lines", len(ys))
	}
	slices.Sort(ys)
	for i := range ys {
		if ys[i] < plotTop+10-0.05 || ys[i] > plotTop+lineH {
			t.Errorf("label at y=%.1f, outside the plot", ys[i])
		}
		if i > 0 && ys[i]-ys[i-1] < labelGap-0.05 {
			t.Errorf("labels at y=%.1f and %.1f overlap", ys[i-1], ys[i])
		}
	}
	if strings.Contains(svg, "…") {
		t.Error("a label was cut short")
	}
	if n := strings.Count(svg, `<line class="ref"`); n != 8 {
		t.Errorf("%d lines for 8 ceilings", n)
	}
	if !strings.Contains(svg, `<rect class="share" x="190" y=`) || !strings.Contains(svg, ">core CPU 0</text>") {
		t.Error("the CPU's ceiling is not a bar")
	}
}

// TestBrowserBusyChart: chromium draws the busy chart where it was laid
// out: CPU 3's bar vermilion (irq+softirq) across most of the plot, CPU
// 5's blue (system) then sky blue (user), an idle CPU white.
func TestBrowserBusyChart(t *testing.T) {
	needChromium(t)
	rec := readRun(t, oneQueueRun)
	svg := renderFile(t, "one-queue.svg", rec)
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<svg x="0" y="(\d+)" [^>]*class="chart bars-busy"`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no busy chart in the SVG document")
	}
	top, _ := strconv.Atoi(string(m[1]))
	img := screenshot(t, svg, chartW, top+400)
	rh := rowHeight(8)
	at := func(cpu int, share float64) (int, int, int) {
		return rgb(img.At(plotX+int(share*plotW), top+plotTop+cpu*rh+rh/2-1))
	}
	near := func(r, g, b int, hex string) bool {
		c := newPalette(hex)[0]
		return abs(r-int(c.r)) <= 24 && abs(g-int(c.g)) <= 24 && abs(b-int(c.b)) <= 24
	}
	for _, c := range []struct {
		cpu   int
		share float64
		color string
	}{{3, 0.1, "#d55e00"}, {3, 0.9, "#d55e00"}, {5, 0.2, "#0072b2"}, {5, 0.5, "#56b4e9"}, {0, 0.5, "#ffffff"}, {5, 0.8, "#ffffff"}} {
		if r, g, b := at(c.cpu, c.share); !near(r, g, b, c.color) {
			t.Errorf("CPU %d at %.0f %% of the bar is %d,%d,%d, want %s", c.cpu, c.share*100, r, g, b, c.color)
		}
	}
	if screenshotDir != "" {
		screenshot(t, renderFile(t, "one-queue.html", rec), 1100, 2400)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
