// Package exporter exposes nicdiag's joins and verdicts to Prometheus: per
// NIC an info metric with joined labels, per PCIe hop the link as trained and
// as capable, the bandwidth model's ceiling for the default workload, the
// findings, and where each queue's IRQ lands. It exports what node_exporter
// lacks, not copies of its counters.
package exporter

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/pcie"
)

// DefaultTTL is how long one check serves scrapes: PCIe links, identities
// and queue placement change rarely, and a check reads hundreds of files.
const DefaultTTL = 30 * time.Second

// Option configures a Collector.
type Option func(*Collector)

// WithRoot reads a snapshot directory instead of the live host.
func WithRoot(dir string) Option { return func(c *Collector) { c.root = dir } }

// WithTTL sets how long a check result is reused between scrapes.
func WithTTL(d time.Duration) Option { return func(c *Collector) { c.ttl = d } }

// Collector is a prometheus.Collector over nicdiag.Check. It is safe for
// concurrent scrapes: they share one cached result, and only one check runs
// at a time.
type Collector struct {
	root  string
	ttl   time.Duration
	now   func() time.Time
	build func(ctx context.Context, root string) (*snapshotMetrics, error) // build; tests replace it

	mu      sync.Mutex
	at      time.Time
	cached  *snapshotMetrics
	lastErr error

	checks  prometheus.Counter
	errors  prometheus.Counter
	seconds prometheus.Gauge
}

// New returns a Collector.
func New(opts ...Option) *Collector {
	c := &Collector{ttl: DefaultTTL, now: time.Now, build: build}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	c.checks = prometheus.NewCounter(prometheus.CounterOpts{Name: "nicdiag_checks_total", Help: "Checks (nicdiag check over this host or snapshot) run to answer scrapes; one result serves every scrape for the TTL."})
	c.errors = prometheus.NewCounter(prometheus.CounterOpts{Name: "nicdiag_check_errors_total", Help: "Checks that failed; nicdiag_up is 0 after one, and the other series carry the last good check, if any."})
	c.seconds = prometheus.NewGauge(prometheus.GaugeOpts{Name: "nicdiag_check_duration_seconds", Help: "Wall time of the last check, in seconds."})
	return c
}

var (
	descInfo = prometheus.NewDesc("nicdiag_nic_info",
		"A physical NIC with its joined identity: PCI function, drivers, chip, NUMA node. iface is the interface, or the PCI address of a function without a netdev (vfio-pci, DPDK, no driver), as in every nicdiag series.",
		[]string{"iface", "pci", "driver", "pci_driver", "chip", "vendor_id", "device_id", "bus", "numa"}, nil)
	descSpeed = prometheus.NewDesc("nicdiag_nic_link_speed_bytes_per_second",
		"Ethernet link speed the driver reports for the interface, in bytes per second (Mb/s × 125000, as node_network_speed_bytes); absent when unknown or down.", []string{"iface"}, nil)
	descHopSpeed = prometheus.NewDesc("nicdiag_pcie_hop_speed_transfers_per_second",
		"PCIe link speed per lane of each hop from the NIC to its root port, in transfers per second (2.5e9 is 2.5 GT/s): as trained (state=current) and the most both ends support (state=capable). hop 0 is the NIC's own link; upstream and downstream are the PCI addresses of its two ends.",
		[]string{"iface", "hop", "upstream", "downstream", "state"}, nil)
	descHopWidth = prometheus.NewDesc("nicdiag_pcie_hop_width_lanes",
		"PCIe link width of each hop from the NIC to its root port, in lanes: as trained (state=current) and the most both ends support (state=capable); labels as nicdiag_pcie_hop_speed_transfers_per_second.",
		[]string{"iface", "hop", "upstream", "downstream", "state"}, nil)
	descCeiling = prometheus.NewDesc("nicdiag_ceiling_bytes_per_second",
		"Bandwidth model: Ethernet frame bytes per second per direction that the ports sharing the NIC's narrowest PCIe link can move together, for the default workload (all of them at once, both directions, 1518-byte frames). estimate is nominal, low or high; bound is the stage that sets the nominal figure (pcie or ethernet); limiting_hop the PCI address of the upstream port of the hop with the least capacity. Compare with nicdiag_line_rate_bytes_per_second.",
		[]string{"iface", "bound", "limiting_hop", "estimate"}, nil)
	descDemand = prometheus.NewDesc("nicdiag_line_rate_bytes_per_second",
		"Ethernet frame bytes per second per direction that the ports sharing the NIC's narrowest PCIe link need at line rate, together, for the default workload (1518-byte frames, so a bit under the sum of their link speeds). Above nicdiag_ceiling_bytes_per_second, the PCIe path is the ceiling.",
		[]string{"iface"}, nil)
	descFinding = prometheus.NewDesc("nicdiag_finding",
		"A finding of nicdiag check: 1 while it holds, labelled with its code, its severity (info, warn or error) and its subject (an interface or a PCI address).",
		[]string{"code", "severity", "subject"}, nil)
	descQueueCPU = prometheus.NewDesc("nicdiag_queue_irq_effective_cpu",
		"Where each NIC data queue's IRQ lands: 1 for every CPU in the IRQ's effective affinity, labelled with the queue index, its kind (rx, tx or txrx), the IRQ number and the CPU.",
		[]string{"iface", "queue", "kind", "irq", "cpu"}, nil)
	descUp = prometheus.NewDesc("nicdiag_up", "1 when the last check succeeded, 0 when it failed (the other series then carry the last good check, if any).", nil, nil)
)

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descInfo, descSpeed, descHopSpeed, descHopWidth, descCeiling, descDemand, descFinding, descQueueCPU, descUp} {
		ch <- d
	}
	c.checks.Describe(ch)
	c.errors.Describe(ch)
	c.seconds.Describe(ch)
}

// Collect serves the cached check result, refreshing it when older than the
// TTL.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	m, err := c.result()
	up := 1.0
	if err != nil {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up)
	if m != nil {
		for _, x := range m.metrics {
			ch <- x
		}
	}
	c.checks.Collect(ch)
	c.errors.Collect(ch)
	c.seconds.Collect(ch)
}

// snapshotMetrics is one check turned into constant metrics.
type snapshotMetrics struct {
	metrics []prometheus.Metric
}

func (c *Collector) result() (*snapshotMetrics, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cached != nil && c.now().Sub(c.at) < c.ttl {
		return c.cached, c.lastErr
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c.checks.Inc()
	m, err := c.build(ctx, c.root)
	c.seconds.Set(time.Since(start).Seconds())
	c.at = c.now()
	c.lastErr = err
	if err != nil {
		c.errors.Inc()
		return c.cached, err // keep serving the last good result, with nicdiag_up 0
	}
	c.cached = m
	return m, nil
}

func build(ctx context.Context, root string) (*snapshotMetrics, error) {
	r, err := nicdiag.Check(ctx, nicdiag.WithRoot(root))
	if err != nil {
		return nil, err
	}
	var ms []prometheus.Metric
	add := func(d *prometheus.Desc, v float64, labels ...string) {
		ms = append(ms, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	for _, n := range r.Host.Selected {
		id := n.ID()
		pci, pciDriver, chip, vendor, device := "", "", "", "", ""
		if n.PCI != nil {
			pci, pciDriver, chip = string(n.PCI.Address), n.PCI.Driver, n.PCI.DeviceName
			vendor, device = hex4(n.PCI.VendorID), hex4(n.PCI.DeviceID)
		}
		add(descInfo, 1, id, pci, n.Driver, pciDriver, chip, vendor, device, string(n.Bus), strconv.Itoa(n.NUMANode))
		if n.Link.SpeedMbps > 0 {
			add(descSpeed, float64(n.Link.SpeedMbps)*bytesPerMbit, id)
		}
		if n.Judged() && n.Path != nil {
			addHops(add, id, n.Path)
		}
		if b := n.Budget; b != nil {
			bound, hop := string(b.Bound), string(b.LimitingHop)
			add(descCeiling, b.CeilingMbps.Nominal*bytesPerMbit, id, bound, hop, "nominal")
			add(descCeiling, b.CeilingMbps.Low*bytesPerMbit, id, bound, hop, "low")
			add(descCeiling, b.CeilingMbps.High*bytesPerMbit, id, bound, hop, "high")
			add(descDemand, b.EthernetMbps*bytesPerMbit, id)
		}
		if q := n.Queues; q != nil {
			for _, q := range q.DataQueues() {
				for _, cpu := range q.CPUs {
					add(descQueueCPU, 1, id, strconv.Itoa(q.Index), string(q.Kind), strconv.Itoa(q.IRQ), strconv.Itoa(cpu))
				}
			}
		}
	}
	for _, f := range r.Findings {
		add(descFinding, 1, string(f.Code), f.Severity.String(), f.Subject)
	}
	return &snapshotMetrics{metrics: ms}, nil
}

// addHops adds the trained and capable speed and width of every hop of p.
func addHops(add func(*prometheus.Desc, float64, ...string), id string, p *pcie.Path) {
	for i, h := range p.Hops {
		hop, up, down := strconv.Itoa(i), string(h.Upstream.Address), string(h.Downstream.Address)
		if h.Speed > 0 {
			add(descHopSpeed, h.Speed*1e9, id, hop, up, down, "current")
		}
		if h.CapableSpeed > 0 {
			add(descHopSpeed, h.CapableSpeed*1e9, id, hop, up, down, "capable")
		}
		if h.Width > 0 {
			add(descHopWidth, float64(h.Width), id, hop, up, down, "current")
		}
		if h.CapableWidth > 0 {
			add(descHopWidth, float64(h.CapableWidth), id, hop, up, down, "capable")
		}
	}
}

// bytesPerMbit turns Mb/s into the bytes per second Prometheus' base unit
// asks for.
const bytesPerMbit = 1e6 / 8

func hex4(v uint16) string { return fmt.Sprintf("0x%04x", v) }
