package exporter

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The exposition is written by hand; the tests read it with Prometheus'
// own text parser (prometheus/common/expfmt), which stays out of the
// binary.

// serve starts the collector with Serve on a loopback port and returns the
// metrics URL.
func serve(t *testing.T, c *Collector) string {
	t.Helper()
	return "http://" + startServer(t, c) + "/metrics"
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != ContentType {
		t.Errorf("Content-Type %q, want %q", ct, ContentType)
	}
	return parse(t, resp.Body)
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
	url := serve(t, New(WithRoot("../testdata/snapshots/82576-minipcie-x1")))
	fams := scrape(t, url)

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
	c := New(WithRoot("../testdata/snapshots/82576-minipcie-x1"), WithTTL(time.Hour))
	url := serve(t, c)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(url)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	fams := scrape(t, url)
	if n := fams["nicdiag_checks_total"].GetMetric()[0].GetCounter().GetValue(); n != 1 {
		t.Errorf("%v checks for 9 scrapes within the TTL, want 1", n)
	}
}

func TestMissingRootIsDownNotFatal(t *testing.T) {
	url := serve(t, New(WithRoot(t.TempDir()+"/nope")))
	fams := scrape(t, url)
	if fams["nicdiag_up"] == nil {
		t.Fatal("no nicdiag_up")
	}
}

// A PCI function bound to vfio-pci has no netdev, but it is a NIC: its
// identity, hops and ceiling are exported under its PCI address.
func TestScrapeNoNetdevFunction(t *testing.T) {
	fams := scrape(t, serve(t, New(WithRoot("../testdata/snapshots/i350-dpdk-vfio"))))
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
		body := exposition(t, New(WithRoot(snap)))
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
	url := serve(t, New(WithRoot(dir), WithTTL(time.Nanosecond)))
	if v := scrape(t, url)["nicdiag_up"].GetMetric()[0].GetGauge().GetValue(); v != 1 {
		t.Fatalf("nicdiag_up = %v before", v)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	if v := scrape(t, url)["nicdiag_up"].GetMetric()[0].GetGauge().GetValue(); v != 0 {
		t.Errorf("nicdiag_up = %v after the snapshot is gone", v)
	}
}
