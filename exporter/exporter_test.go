package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The exposition is written by hand; the tests read it with Prometheus'
// own text parser (prometheus/common/expfmt), which stays out of the
// binary.

const seed = "../testdata/snapshots/82576-minipcie-x1"

// scrape returns what c serves for one scrape, as Prometheus parses it.
func scrape(t *testing.T, c *Collector) map[string]*dto.MetricFamily {
	t.Helper()
	return parse(t, bytes.NewReader(exposition(t, c)))
}

// parse reads an exposition with Prometheus' text parser.
func parse(t *testing.T, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("exposition does not parse: %v", err)
	}
	return fams
}

// exposition returns what c writes for one scrape.
func exposition(t *testing.T, c *Collector) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := c.WriteMetrics(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func TestScrapeSeedSnapshot(t *testing.T) {
	fams := scrape(t, New(option.Root(seed)))

	if v := fams["nicdiag_up"].GetMetric()[0].GetGauge().GetValue(); v != 1 {
		t.Fatalf("nicdiag_up = %v", v)
	}
	info := fams["nicdiag_nic_info"]
	if info == nil || len(info.GetMetric()) != 2 {
		t.Fatalf("nicdiag_nic_info: %v, want two ports", info)
	}
	l := labels(info.GetMetric()[0])
	if l["iface"] != "enp1s0f0" || l["pci"] != "0000:01:00.0" || l["driver"] != "igb" || l["device_id"] != "0x10c9" {
		t.Errorf("info labels = %v", l)
	}
	var sawBottleneck bool
	for _, m := range fams["nicdiag_finding"].GetMetric() {
		if l := labels(m); l["code"] == "pcie.bottleneck" && l["severity"] == "warn" {
			sawBottleneck = true
		}
	}
	if !sawBottleneck {
		t.Error("no pcie.bottleneck finding gauge")
	}
	var ceiling float64
	for _, m := range fams["nicdiag_ceiling_bytes_per_second"].GetMetric() {
		if l := labels(m); l["iface"] == "enp1s0f0" && l["estimate"] == "nominal" {
			ceiling = m.GetGauge().GetValue()
			if l["bound"] != "pcie" || l["limiting_hop"] != "0000:00:1c.0" {
				t.Errorf("ceiling labels = %v", l)
			}
		}
	}
	if ceiling < 1.3e9/8 || ceiling > 1.5e9/8 {
		t.Errorf("ceiling = %g B/s, want about 1435 Mb/s = 1.79e8 B/s", ceiling)
	}
	var current, capable float64
	for _, m := range fams["nicdiag_pcie_hop_speed_transfers_per_second"].GetMetric() {
		l := labels(m)
		if l["iface"] != "enp1s0f0" {
			continue
		}
		switch l["state"] {
		case "current":
			current = m.GetGauge().GetValue()
		case "capable":
			capable = m.GetGauge().GetValue()
		}
	}
	if current != 2.5e9 || capable != 2.5e9 {
		t.Errorf("hop speed current %g capable %g, want 2.5e9 both", current, capable)
	}
	if len(fams["nicdiag_queue_irq_effective_cpu"].GetMetric()) == 0 {
		t.Error("no queue→CPU metrics")
	}
	for name := range fams {
		if !strings.HasPrefix(name, "nicdiag_") {
			t.Errorf("metric %s lacks the nicdiag_ prefix", name)
		}
	}
}

// Concurrent scrapes share one cached check.
func TestConcurrentScrapesShareOneCheck(t *testing.T) {
	c := New(option.Root(seed), WithTTL(time.Hour))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.WriteMetrics(context.Background(), io.Discard); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	fams := scrape(t, c)
	if n := fams["nicdiag_checks_total"].GetMetric()[0].GetCounter().GetValue(); n != 1 {
		t.Errorf("%v checks for 9 scrapes within the TTL, want 1", n)
	}
}

func TestMissingRootIsDownNotFatal(t *testing.T) {
	fams := scrape(t, New(option.Root(t.TempDir()+"/nope")))
	if fams["nicdiag_up"] == nil {
		t.Fatal("no nicdiag_up")
	}
}

// TestReadBudgetReachesTheCheck: the read options a Collector is given
// are the check's: a budget spent at once takes the exporter down, where
// the same snapshot without it is up.
func TestReadBudgetReachesTheCheck(t *testing.T) {
	up := func(c *Collector) float64 {
		return scrape(t, c)["nicdiag_up"].GetMetric()[0].GetGauge().GetValue()
	}
	if v := up(New(option.Root(seed))); v != 1 {
		t.Fatalf("nicdiag_up %v without a budget, want 1", v)
	}
	if v := up(New(option.Root(seed), option.ReadBudget(time.Nanosecond))); v != 0 {
		t.Errorf("nicdiag_up %v with a spent read budget, want 0", v)
	}
}

// A PCI function bound to vfio-pci has no netdev, but it is a NIC: its
// identity, hops and ceiling are exported under its PCI address.
func TestScrapeNoNetdevFunction(t *testing.T) {
	fams := scrape(t, New(option.Root("../testdata/snapshots/i350-dpdk-vfio")))
	want := map[string]bool{"nicdiag_nic_info": false, "nicdiag_ceiling_bytes_per_second": false,
		"nicdiag_pcie_hop_speed_transfers_per_second": false, "nicdiag_line_rate_bytes_per_second": false}
	for name := range want {
		for _, m := range fams[name].GetMetric() {
			if labels(m)["iface"] == "0000:01:00.1" {
				want[name] = true
			}
		}
	}
	for name, ok := range want {
		if !ok {
			t.Errorf("%s has no series for the vfio-pci function 0000:01:00.1", name)
		}
	}
	for _, m := range fams["nicdiag_nic_info"].GetMetric() {
		if l := labels(m); l["iface"] == "0000:01:00.1" && (l["pci"] != "0000:01:00.1" || l["pci_driver"] != "vfio-pci" || l["driver"] != "") {
			t.Errorf("no-netdev info labels %v", l)
		}
	}
}

// The exposition follows Prometheus' conventions (base units, names,
// HELP), as `promtool check metrics` judges them, where promtool exists.
func TestExpositionPassesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not on PATH (Debian package prometheus): exposition not checked by it")
	}
	for _, snap := range append(bundledSnapshots(t), t.TempDir()+"/nope") {
		body := exposition(t, New(option.Root(snap)))
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: promtool check metrics: %v\n%s", snap, err, out)
		}
	}
}

// A snapshot deleted under a running exporter is a failed check
// (nicdiag_up 0), not a host without NICs.
func TestScrapeDeletedRoot(t *testing.T) {
	dir := snaptest.Copy(t, "../testdata/snapshots/82576-minipcie-x1")
	c := New(option.Root(dir), WithTTL(time.Nanosecond))
	if v := scrape(t, c)["nicdiag_up"].GetMetric()[0].GetGauge().GetValue(); v != 1 {
		t.Fatalf("nicdiag_up = %v before", v)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	if v := scrape(t, c)["nicdiag_up"].GetMetric()[0].GetGauge().GetValue(); v != 0 {
		t.Errorf("nicdiag_up = %v after the snapshot is gone", v)
	}
}

// blockingCollector returns a collector whose checks wait for release (or
// for the test's end) and that reports on entered each time one starts.
func blockingCollector(t *testing.T) (c *Collector, entered <-chan struct{}, release func()) {
	t.Helper()
	c = New(option.Root(seed))
	in := make(chan struct{}, 16)
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	c.build = func(ctx context.Context, root option.Read) (*snapshotMetrics, error) {
		in <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return build(ctx, root)
	}
	return c, in, release
}

// WriteMetrics gives up when its context ends before the check does, with
// an error that says why; the check goes on and serves the next call.
func TestWriteMetricsContextEnds(t *testing.T) {
	c, entered, release := blockingCollector(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var b bytes.Buffer
	err := c.WriteMetrics(ctx, &b)
	if !errors.Is(err, context.DeadlineExceeded) || b.Len() != 0 {
		t.Fatalf("WriteMetrics past its deadline: %v, %d bytes", err, b.Len())
	}
	<-entered
	release()
	if err := c.WriteMetrics(context.Background(), &b); err != nil || !strings.Contains(b.String(), "\nnicdiag_up 1\n") {
		t.Errorf("WriteMetrics after the check: %v\n%s", err, b.String())
	}
	if n := strings.Count(b.String(), "nicdiag_checks_total 1\n"); n != 1 {
		t.Errorf("the second call ran another check:\n%s", b.String())
	}
}

// Exposition hands out one check's bytes, plain or gzipped: the same
// slices to every caller within the TTL, the gzipped ones unzipping to the
// plain ones.
func TestExpositionGzip(t *testing.T) {
	c := New(option.Root(seed), WithTTL(time.Hour))
	ctx := context.Background()
	plain, err := c.Exposition(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	zipped, err := c.Exposition(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.Exposition(ctx, true)
	if &again[0] != &zipped[0] {
		t.Error("the gzipped exposition was compressed twice within the TTL")
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, plain) {
		t.Errorf("gunzipped exposition differs from the plain one (%v)", err)
	}
	if len(zipped) >= len(plain) {
		t.Errorf("gzip: %d bytes from %d", len(zipped), len(plain))
	}
}

// counterLines matches the Collector's own counters, which WriteReport
// leaves out, and the check's wall time, which differs from run to run.
var counterLines = regexp.MustCompile(`(?m)^# (HELP|TYPE) nicdiag_check(s|_errors)_total .*\n|^nicdiag_check(s|_errors)_total .*\n|^nicdiag_check_duration_seconds .*$`)

// WriteReport writes a check that ran elsewhere as the Collector serves
// it, byte for byte, less the Collector's counters; a failed check is
// nicdiag_up 0 and the duration.
func TestWriteReport(t *testing.T) {
	for _, snap := range bundledSnapshots(t) {
		served := exposition(t, New(option.Root(snap)))
		r, err := nicdiag.Check(context.Background(), option.Root(snap))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteReport(&b, r, 1500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "\nnicdiag_check_duration_seconds 1.5\n") {
			t.Errorf("%s: no duration of 1.5 s:\n%s", snap, b.String())
		}
		want := counterLines.ReplaceAll(served, nil)
		if got := counterLines.ReplaceAll(b.Bytes(), nil); !bytes.Equal(got, want) {
			t.Errorf("%s: WriteReport differs from the Collector's exposition:\n%s\n--- served\n%s", snap, got, want)
		}
	}
	var b bytes.Buffer
	if err := WriteReport(&b, nil, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	var noHost bytes.Buffer
	if err := WriteReport(&noHost, &nicdiag.Report{}, 2*time.Second); err != nil || noHost.String() != b.String() {
		t.Errorf("a report without a host: %v\n%s", err, noHost.String())
	}
	want := `# HELP nicdiag_check_duration_seconds Wall time of the last check, in seconds.
# TYPE nicdiag_check_duration_seconds gauge
nicdiag_check_duration_seconds 2
# HELP nicdiag_up 1 when the last check succeeded, 0 when it failed (the other series then carry the last good check, if any).
# TYPE nicdiag_up gauge
nicdiag_up 0
`
	if b.String() != want {
		t.Errorf("a failed check:\n%s\nwant\n%s", b.String(), want)
	}
}

// WithCheck runs the given check: its report's findings are served, its
// error is nicdiag_up 0, and a report without a host is an error, not a
// panic.
func TestWithCheck(t *testing.T) {
	var calls int
	r := &nicdiag.Report{Host: &nicdiag.Host{}, Findings: []finding.Finding{{Code: "test.code", Severity: finding.Warn, Subject: "eth9"}}}
	var fail error
	c := New(WithTTL(time.Nanosecond), WithCheck(func(ctx context.Context) (*nicdiag.Report, error) {
		calls++
		if fail != nil {
			return nil, fail
		}
		return r, nil
	}))
	text := string(exposition(t, c))
	if !strings.Contains(text, "\n"+`nicdiag_finding{code="test.code",severity="warn",subject="eth9"} 1`+"\n") || !strings.Contains(text, "\nnicdiag_up 1\n") {
		t.Errorf("WithCheck's report not served:\n%s", text)
	}
	fail = errors.New("broken")
	time.Sleep(time.Millisecond)
	if text := string(exposition(t, c)); !strings.Contains(text, "\nnicdiag_up 0\n") || !strings.Contains(text, `code="test.code"`) {
		t.Errorf("a failed check: want nicdiag_up 0 and the last good series:\n%s", text)
	}
	fail, r = nil, &nicdiag.Report{}
	time.Sleep(time.Millisecond)
	if text := string(exposition(t, c)); !strings.Contains(text, "\nnicdiag_up 0\n") || !strings.Contains(text, "nicdiag_check_errors_total 2\n") {
		t.Errorf("a report without a host: want a failed check:\n%s", text)
	}
	if calls != 3 {
		t.Errorf("%d checks, want 3", calls)
	}
}
