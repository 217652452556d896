// Package exporter exposes nicdiag's joins and verdicts to Prometheus: per
// NIC an info metric with joined labels, per PCIe hop the link as trained and
// as capable, the bandwidth model's ceiling for the default workload, the
// findings, and where each queue's IRQ lands. It exports what node_exporter
// lacks, not copies of its counters.
//
// It writes the Prometheus text format (version 0.0.4) itself, with the
// standard library alone, so a program that imports it links no HTTP
// server and no Prometheus client library: a Collector keeps one check's
// exposition for the scrapes within its TTL, and WriteReport writes a
// check that already ran (nicdiag check --format prom, for node_exporter's
// textfile collector). Package exporterhttp serves a Collector over
// net/http.
package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

// DefaultTTL is how long one check serves scrapes: PCIe links, identities
// and queue placement change rarely, and a check reads hundreds of files.
const DefaultTTL = 30 * time.Second

// checkTimeout bounds one check.
const checkTimeout = 20 * time.Second

// Option configures a Collector: one of this package's, or one of package
// option's, which the check gets as they are: option.Root checks a
// snapshot directory instead of the live host, option.ReadBudget bounds
// the time each check spends reading.
type Option interface {
	ApplyRead(*option.Read)
	ExporterOption()
}

// own is an option of this package's.
type own func(*Collector)

func (own) ApplyRead(*option.Read) {}
func (own) ExporterOption()        {}

// WithTTL sets how long a check result is reused between scrapes.
func WithTTL(d time.Duration) Option { return own(func(c *Collector) { c.ttl = d }) }

// WithCheck sets the check a Collector runs, in place of nicdiag.Check with
// the Collector's read options (option.Root, option.ReadBudget): a program with options of its own for the check,
// or a test. check must return a report with its Host, or an error; ctx
// ends 20 s after the check starts.
func WithCheck(check func(ctx context.Context) (*nicdiag.Report, error)) Option {
	return own(func(c *Collector) {
		c.build = func(ctx context.Context, _ option.Read) (*snapshotMetrics, error) {
			r, err := check(ctx)
			switch {
			case err != nil:
				return nil, err
			case r == nil || r.Host == nil:
				return nil, errors.New("exporter: the check returned no report")
			}
			return reportMetrics(r), nil
		}
	})
}

// Collector runs nicdiag.Check and keeps its result as one rendered
// exposition. It is safe for concurrent scrapes: they share the cached
// result, and only one check runs at a time, bounded at 20 s.
type Collector struct {
	read  option.Read // the check's root and read budget
	ttl   time.Duration
	now   func() time.Time
	build func(ctx context.Context, r option.Read) (*snapshotMetrics, error) // build; tests replace it

	mu      sync.Mutex
	at      time.Time     // when the last check ended
	page    *page         // the exposition after the last check; nil before the first
	running chan struct{} // closed when the check in flight ends; nil when none runs

	// Only the check in flight touches these, and one runs at a time.
	good         *snapshotMetrics // the last good check
	checks, errs int
}

// New returns a Collector.
func New(opts ...Option) *Collector {
	c := &Collector{ttl: DefaultTTL, now: time.Now, build: build}
	for _, o := range opts {
		if o == nil {
			continue
		}
		o.ApplyRead(&c.read)
		if o, ok := o.(own); ok {
			o(c)
		}
	}
	return c
}

var (
	famChecks = newFamily("nicdiag_checks_total", "counter",
		"Checks (nicdiag check over this host or snapshot) run to answer scrapes; one result serves every scrape for the TTL.")
	famErrors = newFamily("nicdiag_check_errors_total", "counter",
		"Checks that failed; nicdiag_up is 0 after one, and the other series carry the last good check, if any.")
	famSeconds = newFamily("nicdiag_check_duration_seconds", "gauge", "Wall time of the last check, in seconds.")
	famInfo    = newFamily("nicdiag_nic_info", "gauge",
		"A physical NIC with its joined identity: PCI function, drivers, chip, NUMA node. iface is the interface, or the PCI address of a function without a netdev (vfio-pci, DPDK, no driver), as in every nicdiag series.",
		"iface", "pci", "driver", "pci_driver", "chip", "vendor_id", "device_id", "bus", "numa")
	famSpeed = newFamily("nicdiag_nic_link_speed_bytes_per_second", "gauge",
		"Ethernet link speed the driver reports for the interface, in bytes per second (Mb/s × 125000, as node_network_speed_bytes); absent when unknown or down.", "iface")
	famHopSpeed = newFamily("nicdiag_pcie_hop_speed_transfers_per_second", "gauge",
		"PCIe link speed per lane of each hop from the NIC to its root port, in transfers per second (2.5e9 is 2.5 GT/s): as trained (state=current) and the most both ends support (state=capable); above an Intel chipset's root port, the chipset uplink (DMI) as its datasheet gives it (state=modelled). hop 0 is the NIC's own link; upstream and downstream are the PCI addresses of its two ends.",
		"iface", "hop", "upstream", "downstream", "state")
	famHopWidth = newFamily("nicdiag_pcie_hop_width_lanes", "gauge",
		"PCIe link width of each hop from the NIC to its root port, in lanes: as trained (state=current) and the most both ends support (state=capable); labels as nicdiag_pcie_hop_speed_transfers_per_second.",
		"iface", "hop", "upstream", "downstream", "state")
	famCeiling = newFamily("nicdiag_ceiling_bytes_per_second", "gauge",
		"Bandwidth model: Ethernet frame bytes per second per direction that the ports sharing the NIC's narrowest PCIe link can move together, for the default workload (all of them at once, both directions, 1518-byte frames). estimate is nominal, low or high; bound is the stage that sets the nominal figure (pcie or ethernet); limiting_hop the PCI address of the upstream port of the hop with the least capacity. Compare with nicdiag_line_rate_bytes_per_second.",
		"iface", "bound", "limiting_hop", "estimate")
	famDemand = newFamily("nicdiag_line_rate_bytes_per_second", "gauge",
		"Ethernet frame bytes per second per direction that the ports sharing the NIC's narrowest PCIe link need at line rate, together, for the default workload (1518-byte frames, so a bit under the sum of their link speeds). Above nicdiag_ceiling_bytes_per_second, the PCIe path is the ceiling.",
		"iface")
	famFinding = newFamily("nicdiag_finding", "gauge",
		"A finding of nicdiag check: 1 while it holds, labelled with its code, its severity (info, warn or error) and its subject (an interface or a PCI address).",
		"code", "severity", "subject")
	famQueueCPU = newFamily("nicdiag_queue_irq_effective_cpu", "gauge",
		"Where each NIC data queue's IRQ lands: 1 for every CPU in the IRQ's effective affinity, labelled with the queue index, its kind (rx, tx or txrx), the IRQ number and the CPU.",
		"iface", "queue", "kind", "irq", "cpu")
	famUp = newFamily("nicdiag_up", "gauge", "1 when the last check succeeded, 0 when it failed (the other series then carry the last good check, if any).")
)

// WriteMetrics writes the exposition of the cached check result to w in
// the Prometheus text format (ContentType), first running a check when the
// result is older than the TTL. A failed check is no error: nicdiag_up is
// then 0. It returns ctx's error, wrapped, when ctx ends before the check
// does; the check goes on and fills the cache for the next call.
func (c *Collector) WriteMetrics(ctx context.Context, w io.Writer) error {
	b, err := c.Exposition(ctx, false)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Exposition returns what WriteMetrics writes, gzipped when gz is set (the
// gzipped copy is made once per check, on the first call that asks). The
// bytes are shared by every caller until the next check: do not modify
// them.
func (c *Collector) Exposition(ctx context.Context, gz bool) ([]byte, error) {
	p, err := c.current(ctx)
	if err != nil {
		return nil, err
	}
	if gz {
		return p.gzipped(), nil
	}
	return p.text, nil
}

// WriteReport writes r, the report of a check that took d, as a Collector
// would serve it, less the Collector's counters of its own checks
// (nicdiag_checks_total, nicdiag_check_errors_total): the exposition for
// node_exporter's textfile collector. A nil r (or one without its Host)
// stands for a failed check: nicdiag_up 0 and the duration, and no other
// series.
func WriteReport(w io.Writer, r *nicdiag.Report, d time.Duration) error {
	var samples []sample
	up := 0.0
	if r != nil && r.Host != nil {
		samples, up = reportMetrics(r).samples, 1
	}
	samples = append(samples, sample{f: famUp, v: up}, sample{f: famSeconds, v: d.Seconds()})
	_, err := w.Write(render(samples))
	return err
}

// page is one check's exposition, plain and, once asked for, gzipped.
type page struct {
	text   []byte
	gzOnce sync.Once
	gz     []byte
}

// gzipped returns the text gzipped, compressing it on the first call.
func (p *page) gzipped() []byte {
	p.gzOnce.Do(func() {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(p.text) // a bytes.Buffer does not fail
		zw.Close()
		p.gz = b.Bytes()
	})
	return p.gz
}

// current returns the page of a check younger than the TTL, waiting (until
// ctx ends) for the check in flight or starting one.
func (c *Collector) current(ctx context.Context) (*page, error) {
	c.mu.Lock()
	if c.page != nil && c.now().Sub(c.at) < c.ttl {
		p := c.page
		c.mu.Unlock()
		return p, nil
	}
	if c.running == nil {
		c.running = make(chan struct{})
		go c.refresh(c.running)
	}
	done := c.running
	c.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("exporter: waiting for a check: %w", ctx.Err())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.page, nil
}

// refresh runs one check, renders the page and closes done.
func (c *Collector) refresh(done chan struct{}) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	m, err := c.build(ctx, c.read)
	cancel()
	seconds := time.Since(start).Seconds()
	c.checks++
	up := 1.0
	if err != nil {
		c.errs++
		up = 0 // keep serving the last good result, with nicdiag_up 0
	} else {
		c.good = m
	}
	var samples []sample
	if c.good != nil {
		samples = append(samples, c.good.samples...) // a copy: render sorts it
	}
	samples = append(samples,
		sample{f: famUp, v: up},
		sample{f: famChecks, v: float64(c.checks)},
		sample{f: famErrors, v: float64(c.errs)},
		sample{f: famSeconds, v: seconds})
	p := &page{text: render(samples)}

	c.mu.Lock()
	c.page, c.at, c.running = p, c.now(), nil
	c.mu.Unlock()
	close(done)
}

// snapshotMetrics is one check turned into series.
type snapshotMetrics struct {
	samples []sample
}

func build(ctx context.Context, read option.Read) (*snapshotMetrics, error) {
	r, err := nicdiag.Check(ctx, option.Of(read))
	if err != nil {
		return nil, err
	}
	return reportMetrics(r), nil
}

// reportMetrics turns the report of one check into series.
func reportMetrics(r *nicdiag.Report) *snapshotMetrics {
	var ms []sample
	add := func(f *family, v float64, labels ...string) {
		ms = append(ms, sample{f: f, values: labels, v: v})
	}
	for _, n := range r.Host.Selected {
		id := n.ID()
		pci, pciDriver, chip, vendor, device := "", "", "", "", ""
		if n.PCI != nil {
			pci, pciDriver, chip = string(n.PCI.Address), n.PCI.Driver, n.PCI.DeviceName
			vendor, device = hex4(n.PCI.VendorID), hex4(n.PCI.DeviceID)
		}
		add(famInfo, 1, id, pci, n.Driver, pciDriver, chip, vendor, device, string(n.Bus), strconv.Itoa(n.NUMANode))
		if n.Link.SpeedMbps > 0 {
			add(famSpeed, float64(n.Link.SpeedMbps)*bytesPerMbit, id)
		}
		if n.Judged() && n.Path != nil {
			addHops(add, id, n.Path)
		}
		if b := n.Budget; b != nil {
			bound, hop := string(b.Bound), string(b.LimitingHop)
			add(famCeiling, b.CeilingMbps.Nominal*bytesPerMbit, id, bound, hop, "nominal")
			add(famCeiling, b.CeilingMbps.Low*bytesPerMbit, id, bound, hop, "low")
			add(famCeiling, b.CeilingMbps.High*bytesPerMbit, id, bound, hop, "high")
			add(famDemand, b.EthernetMbps*bytesPerMbit, id)
		}
		addNICFacts(add, n)
		if q := n.Queues; q != nil {
			for _, q := range q.DataQueues() {
				for _, cpu := range q.CPUs {
					add(famQueueCPU, 1, id, strconv.Itoa(q.Index), string(q.Kind), strconv.Itoa(q.IRQ), strconv.Itoa(cpu))
				}
			}
		}
	}
	addHostFacts(add, r.Host)
	for _, f := range r.Findings {
		add(famFinding, 1, string(f.Code), f.Severity.String(), f.Subject)
	}
	return &snapshotMetrics{samples: ms}
}

// addHops adds the trained and capable speed and width of every hop of p.
func addHops(add func(*family, float64, ...string), id string, p *pcie.Path) {
	for i, h := range p.Hops {
		hop, up, down := strconv.Itoa(i), string(h.Upstream.Address), string(h.Downstream.Address)
		if h.Speed > 0 {
			add(famHopSpeed, h.Speed*1e9, id, hop, up, down, "current")
		}
		if h.CapableSpeed > 0 {
			add(famHopSpeed, h.CapableSpeed*1e9, id, hop, up, down, "capable")
		}
		if h.Width > 0 {
			add(famHopWidth, float64(h.Width), id, hop, up, down, "current")
		}
		if h.CapableWidth > 0 {
			add(famHopWidth, float64(h.CapableWidth), id, hop, up, down, "capable")
		}
	}
}

// bytesPerMbit turns Mb/s into the bytes per second Prometheus' base unit
// asks for.
const bytesPerMbit = 1e6 / 8

func hex4(v uint16) string { return fmt.Sprintf("0x%04x", v) }
