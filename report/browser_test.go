package report

import (
	"bytes"
	"context"
	"image"
	stdcolor "image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/monitor"
)

// chromiumPath is Debian's chromium; the browser tests skip without it.
const chromiumPath = "/usr/bin/chromium"

// screenshotDir, when set, keeps the browser tests' screenshots for a
// person to look at: NICDIAG_SCREENSHOTS=/tmp/shots go test ./report -run Browser
var screenshotDir = os.Getenv("NICDIAG_SCREENSHOTS")

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("headless browser check skipped: %s is absent (apt-get install chromium)", chromiumPath)
	}
	if testing.Short() {
		t.Skip("headless browser check skipped in -short mode")
	}
}

// chromium runs headless chromium on url with extra flags and returns its
// stdout and stderr.
func chromium(t *testing.T, url string, extra ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir(), "--hide-scrollbars",
		"--force-device-scale-factor=1", "--enable-logging=stderr", "--v=0"}
	args = append(append(args, extra...), url)
	cmd := exec.CommandContext(ctx, chromiumPath, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(extra, " "), err, e.String())
	}
	return o.String(), e.String()
}

// pageErrors are the lines of chromium's log that say the page itself went
// wrong: a console message (the page has no script, so any is an error), a
// resource that failed to load, a blocked network request.
var pageErrors = regexp.MustCompile(`(?m)^.*(CONSOLE|Failed to load resource|Uncaught|net::ERR_|Refused to|Not allowed to load).*$`)

func renderFile(t *testing.T, name string, rec *monitor.Record) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := WriteFile(p, rec); err != nil {
		t.Fatal(err)
	}
	return p
}

func screenshot(t *testing.T, file string, w, h int) image.Image {
	t.Helper()
	shot := filepath.Join(t.TempDir(), "shot.png")
	chromium(t, "file://"+file, "--screenshot="+shot, "--window-size="+strconv.Itoa(w)+","+strconv.Itoa(h))
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if screenshotDir != "" {
		keep := filepath.Join(screenshotDir, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))+"-"+strings.TrimPrefix(filepath.Ext(file), ".")+".png")
		if err := os.MkdirAll(screenshotDir, 0o755); err == nil {
			if err := os.WriteFile(keep, b, 0o644); err == nil {
				t.Logf("screenshot kept at %s", keep)
			}
		}
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func rgb(c stdcolor.Color) (r, g, b int) {
	R, G, B, _ := c.RGBA()
	return int(R >> 8), int(G >> 8), int(B >> 8)
}

// isHot: the dark-red end of the load scale (above about 85%).
func isHot(c stdcolor.Color) bool {
	r, g, b := rgb(c)
	return r >= 110 && r <= 200 && g <= 40 && b <= 70
}

// isCool: the pale-yellow start of the load scale (under about 10%), and
// not the white page.
func isCool(c stdcolor.Color) bool {
	r, g, b := rgb(c)
	return r >= 250 && g >= 235 && b >= 150 && b <= 230
}

// TestBrowserLoads: chromium loads the HTML report with no console error
// and no failed resource, and the DOM holds every chart and the verdict.
func TestBrowserLoads(t *testing.T) {
	needChromium(t)
	rec, err := monitor.ReadRecordFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	page := renderFile(t, "run.html", rec)
	dom, log := chromium(t, "file://"+page, "--dump-dom")
	if m := pageErrors.FindAllString(log, -1); len(m) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(m, "\n"))
	}
	for _, want := range []string{"chart lines-ceilings", "chart heatmap-load", "chart heatmap-net-rx", "chart heatmap-net-tx", "chart heatmap-queues",
		"chart lines-softnet", "chart lines-throughput", "irq.hot_core", "softnet.squeeze", `<h2 id="verdict">Run verdict</h2>`,
		"<code>core</code>", "core 2828 Mb/s, 99 % reached, bound this run: CPU 2 (98 % irq+softirq)", "</html>"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the loaded DOM lacks %q", want)
		}
	}

	// The error check must be able to fail: a page with a script error is
	// caught. (Chromium does not log a missing file:// image; that the page
	// references nothing outside itself is TestSelfContained's job.)
	bad := filepath.Join(t.TempDir(), "bad.html")
	if err := os.WriteFile(bad, []byte(`<!DOCTYPE html><html><body><script>nope()</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, log = chromium(t, "file://"+bad, "--dump-dom")
	if len(pageErrors.FindAllString(log, -1)) == 0 {
		t.Errorf("the error check missed a broken page's errors; chromium said:\n%s", log)
	}
}

// TestBrowserHeatmapHotCore: in a screenshot of the HTML page, the load
// heatmap has one dark-red band, exactly one row high, with two pale rows
// (CPU 0, 1) above it and one (CPU 3) below: the hot core is drawn where
// the record put it.
func TestBrowserHeatmapHotCore(t *testing.T) {
	needChromium(t)
	rec, err := monitor.ReadRecordFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	// The verdict and its chart come first: the heatmap is below them.
	img := screenshot(t, renderFile(t, "run.html", rec), 1100, 2600)
	bounds := img.Bounds()
	// The longest horizontal run of hot pixels is the hot CPU's row.
	bestLen, bestX, bestY := 0, 0, 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		run := 0
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			if isHot(img.At(x, y)) {
				run++
				if run > bestLen {
					bestLen, bestX, bestY = run, x-run+1, y
				}
			} else {
				run = 0
			}
		}
	}
	// 58 of the 60 columns are at full load (the first two ramp up).
	if minLen := plotW * 55 / 60; bestLen < minLen {
		t.Fatalf("no hot band: longest dark-red run is %d px (want ≥ %d)", bestLen, minLen)
	}
	x := bestX + bestLen/2
	top, bottom := bestY, bestY
	for top > bounds.Min.Y && isHot(img.At(x, top-1)) {
		top--
	}
	for bottom < bounds.Max.Y-1 && isHot(img.At(x, bottom+1)) {
		bottom++
	}
	rh := rowHeight(synthCPUs)
	if h := bottom - top + 1; h < rh-1 || h > rh+1 {
		t.Fatalf("hot band is %d px high, want one row (%d px)", h, rh)
	}
	mid := (top + bottom) / 2
	count := func(dir int) int {
		n := 0
		for k := 1; ; k++ {
			if !isCool(img.At(x, mid+dir*k*rh)) {
				return n
			}
			n++
		}
	}
	above, below := count(-1), count(+1)
	if above != synthHot || below != synthCPUs-1-synthHot {
		r, g, b := rgb(img.At(x, mid-rh))
		t.Fatalf("hot band has %d pale rows above and %d below, want %d and %d (CPU %d of %d); colour above: %d,%d,%d",
			above, below, synthHot, synthCPUs-1-synthHot, synthHot, synthCPUs, r, g, b)
	}
	t.Logf("hot band at y=%d..%d, x=%d..%d: CPU %d of %d", top, bottom, bestX, bestX+bestLen-1, above, synthCPUs)
}

// TestBrowserSVGCells: chromium draws the standalone SVG with every load
// cell where the generator put it: the cell of CPU 2 in each full-load
// second is dark red, every other CPU's cell pale.
func TestBrowserSVGCells(t *testing.T) {
	needChromium(t)
	rec, err := monitor.ReadRecordFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	svg := renderFile(t, "run.svg", rec)
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	// The load heatmap is nested at its own offset, below the ceiling chart.
	m := regexp.MustCompile(`<svg x="0" y="(\d+)" [^>]*class="chart heatmap-load"`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no load heatmap in the SVG document")
	}
	top, _ := strconv.Atoi(string(m[1]))
	img := screenshot(t, svg, chartW, top+300)
	rh := rowHeight(synthCPUs)
	cw := float64(plotW) / synthSamples
	for col := 2; col < synthSamples; col++ {
		x := plotX + int((float64(col)+0.5)*cw)
		for cpu := range synthCPUs {
			y := top + plotTop + cpu*rh + rh/2
			c := img.At(x, y)
			r, g, b := rgb(c)
			if cpu == synthHot && !isHot(c) {
				t.Errorf("second %d, CPU %d at (%d,%d) is %d,%d,%d, want dark red", col, cpu, x, y, r, g, b)
			}
			if cpu != synthHot && !isCool(c) {
				t.Errorf("second %d, CPU %d at (%d,%d) is %d,%d,%d, want pale", col, cpu, x, y, r, g, b)
			}
		}
	}
}
