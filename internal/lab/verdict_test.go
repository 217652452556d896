package lab

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
)

// The monitored run of TestRunVerdict (scripts/traffic.sh, vd-* sections).
const (
	vdNIC     = "eth0"
	vdPayload = 1400 // ping -s
	// vdPingBytes is one echo request or reply as the driver counts it:
	// Ethernet header, IPv4, ICMP, payload; no FCS.
	vdPingBytes = 14 + 20 + 8 + vdPayload
	// vdMaxStray bounds the frames per direction that eth0 carried between
	// the two readings of its counters besides the echoes: ARP
	// revalidation (each side probes its neighbour entry once it goes
	// stale: a request and a reply each way, twice over at most). IPv6 is
	// off in both namespaces, so nothing else speaks on the wire.
	vdMaxStray = 4
	// vdMaxFrame is the largest frame a stray can be, FCS included.
	vdMaxFrame = 1518
	// vdReadSkew bounds the frames that arrive while the sampler reads
	// one NIC's counters: sysfs's rx_packets, tx_packets, rx_bytes and
	// tx_bytes are files read one after the other (then ethtool's
	// per-queue ones), so a frame arriving in between is in one sample's
	// packets and the next one's bytes. Over the whole record that cancels
	// out (the first and last readings are quiet); at the edges of the
	// verdict's active window, mid-flood, it need not.
	vdReadSkew = 2
)

// vdDir is the guest's own count of one direction of eth0 between the
// readings before and after the monitored run.
type vdDir struct {
	dir          string  // rx or tx
	pkts, bytes  float64 // sysfs statistics (the driver's ring sums, no FCS)
	hwPkts       float64 // ethtool rx_packets/tx_packets: the 82576's GPRC/GPTC
	hwOctets     float64 // ethtool rx_bytes/tx_bytes: GORC/GOTC, FCS included
	queuePkts    map[int]float64
	queueBytes   map[int]float64
	ping         float64 // ping's count: transmitted (tx), received (rx)
	late         float64 // rx: replies ping stopped waiting for at its deadline (-w): they arrive after it exits, inside the record
	stray        float64 // pkts - ping: ARP, and the late replies
	rec, recB    float64 // the record's packets and bytes, every sample
	recQ, recQB  map[int]float64
	busy         float64 // the record's frames in the samples not quiet
	verdict      *monitor.Traffic
	groundFrameB float64 // mean frame bytes (FCS included) by sysfs
}

// TestRunVerdict: a ping flood through igb (whose driver counts per queue)
// under `nicdiag monitor --interval 500ms --record FILE eth0 -- CMD`. The
// record read back with monitor.ReadRecord is held against the guest's own
// counters read before and after: the samples' NIC and per-queue rates
// integrate to the counters' deltas, the verdict's traffic is the mean of
// its active samples and agrees with the deltas up to the samples it
// leaves out, its frame size is the counters', and its bound is what a
// few Mb/s on an idle emulated gigabit port (a nominal speed, no port
// ceiling) is.
func TestRunVerdict(t *testing.T) {
	secs := bootShared(t, "traffic")
	c := vdCounters{
		st0: ParseStats(sec(t, secs, "vd-sysfs0").Stdout), st1: ParseStats(sec(t, secs, "vd-sysfs1").Stdout),
		et0: ParseStats(sec(t, secs, "vd-ethtool0").Stdout), et1: ParseStats(sec(t, secs, "vd-ethtool1").Stdout),
		ethtool1: sec(t, secs, "vd-ethtool1").Stdout,
	}
	speed := float64(c.st1["speed"])
	if speed != 1000 {
		t.Fatalf("%s reports %v Mb/s; the emulated 82576 links at 1000", vdNIC, speed)
	}
	p := vdPingRun(t, sec(t, secs, "vd-ping"))
	rec := vdReadRecord(t, secs)
	v := rec.Verdict

	// Ground truth per direction.
	dirs := []*vdDir{{dir: "rx", ping: float64(p.rcvd), late: float64(p.sent - p.rcvd)}, {dir: "tx", ping: float64(p.sent)}}
	for _, d := range dirs {
		vdGroundTruth(t, d, c)
	}

	r := vdSampleRecord(t, rec, dirs)
	for _, d := range dirs {
		vdRecordTotals(t, d)
	}
	t.Logf("record: %d samples over %.2f s; up to any sample, queues vs NIC differ by at most %.1f frames (read skew)", len(rec.Samples), r.total, r.skew)

	vdVerdictVsCounters(t, v, rec, dirs, r, p)
	vdBound(t, v)
}

// vdCounters: eth0's sysfs statistics and `ethtool -S` before and after the
// monitored run, and the latter's text for failure messages.
type vdCounters struct {
	st0, st1, et0, et1 map[string]uint64
	ethtool1           string
}

// vdPing: ping's own counts and duration (by /proc/uptime around it).
type vdPing struct {
	sent, rcvd int
	s          float64
}

// vdPingRun reads ping's own counts and duration.
func vdPingRun(t *testing.T, vp Section) vdPing {
	t.Helper()
	sent, rcvd, err := pingCounts(vp.Stdout)
	// At its deadline ping stops waiting for the requests in flight
	// (RTT / interval of them: tens under a loaded TCG).
	if err != nil || rcvd < 100 || rcvd < sent*9/10 {
		t.Fatalf("the monitored ping did not get its replies (%v):\n%s", err, vp.Stdout)
	}
	up := strings.Fields(vp.Stdout)
	t0, e0 := strconv.ParseFloat(up[0], 64)
	t1, e1 := strconv.ParseFloat(up[len(up)-2], 64)
	if e0 != nil || e1 != nil || t1 <= t0 {
		t.Fatalf("no /proc/uptime around ping:\n%s", vp.Stdout)
	}
	return vdPing{sent: sent, rcvd: rcvd, s: t1 - t0}
}

// vdReadRecord reads the record back as report and the CLI read it, and
// checks its notes, run, summary lines and limits; the record it returns
// has a verdict.
func vdReadRecord(t *testing.T, secs map[string]Section) *monitor.Record {
	t.Helper()
	raw := sec(t, secs, "vd-record").Stdout
	rec, err := monitor.ReadRecord(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("ReadRecord: %v\n%s", err, raw)
	}
	if len(rec.Notes) > 0 {
		t.Errorf("record notes: %v", rec.Notes)
	}
	if rec.Verdict == nil {
		t.Fatal("the record has no verdict")
	}
	if c := rec.Run.Command; len(c) == 0 || c[0] != "sh" || rec.Run.ExitCode == nil || *rec.Run.ExitCode != 0 {
		t.Errorf("record's command %v exit %v, want sh ... exited 0", c, rec.Run.ExitCode)
	}
	checkVerdictLines(t, raw, sec(t, secs, "vd-monitor"), rec.Verdict)
	// QEMU's 82576 is emulated: its 1000 Mb/s is nominal, no port ceiling.
	if len(rec.Limits) != 1 || rec.Limits[0].NIC != vdNIC || !rec.Limits[0].Virtual || rec.Limits[0].PortMbps != 0 {
		t.Errorf("record's limits %+v, want %s, emulated, without a port ceiling", rec.Limits, vdNIC)
	}
	return rec
}

// vdGroundTruth fills d's counter deltas from c and checks them against
// ping and against each other.
func vdGroundTruth(t *testing.T, d *vdDir, c vdCounters) {
	t.Helper()
	delta := func(m0, m1 map[string]uint64, k string) float64 {
		a, ok0 := m0[k]
		b, ok1 := m1[k]
		if !ok0 || !ok1 || b < a {
			t.Fatalf("counter %s: %d (%v) then %d (%v)", k, a, ok0, b, ok1)
		}
		return float64(b - a)
	}
	d.pkts, d.bytes = delta(c.st0, c.st1, d.dir+"_packets"), delta(c.st0, c.st1, d.dir+"_bytes")
	d.hwPkts, d.hwOctets = delta(c.et0, c.et1, d.dir+"_packets"), delta(c.et0, c.et1, d.dir+"_bytes")
	d.queuePkts, d.queueBytes = map[int]float64{}, map[int]float64{}
	for q := 0; ; q++ {
		k := fmt.Sprintf("%s_queue_%d_", d.dir, q)
		if _, ok := c.et1[k+"packets"]; !ok {
			break
		}
		d.queuePkts[q], d.queueBytes[q] = delta(c.et0, c.et1, k+"packets"), delta(c.et0, c.et1, k+"bytes")
	}
	if len(d.queuePkts) != 2 {
		t.Fatalf("ethtool -S %s has %d %s queues, want igb's 2 (2 vCPUs):\n%s", vdNIC, len(d.queuePkts), d.dir, c.ethtool1)
	}
	d.stray = d.pkts - d.ping
	d.groundFrameB = (d.bytes + 4*d.pkts) / d.pkts
	d.recQ, d.recQB = map[int]float64{}, map[int]float64{}
	// The counters themselves: every ping in the deltas, and only a
	// few frames more. The driver's per-queue counters and the
	// hardware's, read by ethtool inside the sysfs readings, hold
	// the same frames; the hardware counts 4 bytes of FCS more per
	// frame (the unit of the verdict's Mb/s).
	if d.stray < 0 || d.stray > vdMaxStray+d.late {
		t.Errorf("%s: sysfs counted %v frames, ping %v (and %v late replies): %v more, want 0..%v", d.dir, d.pkts, d.ping, d.late, d.stray, vdMaxStray+d.late)
	}
	// (A frame in flight at a reading can be in the hardware's count
	// and not yet in the driver's: one each way at most, the wire
	// being quiet then.)
	qp, qb := sum(d.queuePkts), sum(d.queueBytes)
	if off := math.Abs(qp - d.hwPkts); off > 1 || math.Abs(qb+4*qp-d.hwOctets) > off*vdMaxFrame {
		t.Errorf("%s: ethtool per-queue counters moved %v frames, %v bytes; the hardware's %v frames, %v octets (want the frames plus 4 octets each)", d.dir, qp, qb, d.hwPkts, d.hwOctets)
	}
	if qp < d.ping || qp > d.pkts || qb < d.ping*vdPingBytes || qb > d.bytes {
		t.Errorf("%s: ethtool per-queue counters moved %v frames, %v bytes: not between ping's (%v × %d bytes) and sysfs's (%v, %v)", d.dir, qp, qb, d.ping, vdPingBytes, d.pkts, d.bytes)
	}
}

// vdRecordSums: what vdSampleRecord adds up over the record's samples.
type vdRecordSums struct {
	quiet     []bool  // per sample: quietSamples
	peakMbps  float64 // the busiest sample's
	total     float64 // seconds
	quietBits float64 // frame bits in the quiet samples
	busy      int     // samples not quiet
	skew      float64 // the largest gap, up to any sample, between queues and NIC
}

// vdSampleRecord: the record, sample by sample: every sample has eth0 with
// every queue's packet counters (igb's ethtool statistics, per queue). It
// adds each direction's frames and bytes into dirs.
func vdSampleRecord(t *testing.T, rec *monitor.Record, dirs []*vdDir) vdRecordSums {
	t.Helper()
	// quiet: the samples the run's span may leave out (monitor's spanShare
	// and minMbps/minPPS): under a tenth of the busiest, or under 1 Mb/s and
	// 1000 frames/s. Every other sample is inside it.
	var r vdRecordSums
	r.quiet, r.peakMbps = quietSamples(rec.Samples)
	for i, x := range rec.Samples {
		n := nicRate(x, vdNIC)
		if n == nil {
			t.Fatalf("sample %d has no %s: %+v", i, vdNIC, x.NICs)
		}
		if n.StatsError != "" || n.QueueStatsError != "" {
			t.Errorf("sample %d: stats error %q, queue stats error %q", i, n.StatsError, n.QueueStatsError)
		}
		dt := x.IntervalS
		r.total += dt
		m := (frameBits(n.RXBytesPerS, n.RXPacketsPerS) + frameBits(n.TXBytesPerS, n.TXPacketsPerS)) / 1e6
		if r.quiet[i] {
			r.quietBits += m * 1e6 * dt
		} else {
			r.busy++
		}
		for _, d := range dirs {
			r.skew = math.Max(r.skew, vdSampleDir(t, i, n, dt, r.quiet[i], d))
		}
	}
	return r
}

// vdSampleDir adds sample i's frames and bytes of d's direction into d and
// returns how far, up to this sample, its queues and the NIC differ.
func vdSampleDir(t *testing.T, i int, n *irq.NICRate, dt float64, quiet bool, d *vdDir) float64 {
	t.Helper()
	pps, bps := n.RXPacketsPerS, n.RXBytesPerS
	if d.dir == "tx" {
		pps, bps = n.TXPacketsPerS, n.TXBytesPerS
	}
	d.rec += pps * dt
	d.recB += bps * dt
	if !quiet {
		d.busy += pps * dt
	}
	var qPkts float64
	seen := map[int]bool{}
	for _, q := range n.Queues {
		if string(q.Kind) != d.dir {
			continue
		}
		p, b := q.RXPacketsPerS, q.RXBytesPerS
		if d.dir == "tx" {
			p, b = q.TXPacketsPerS, q.TXBytesPerS
		}
		if p == nil || b == nil {
			t.Errorf("sample %d: %s queue %s (%d) has no per-queue packet or byte rate", i, vdNIC, q.Action, q.Index)
			continue
		}
		seen[q.Index] = true
		d.recQ[q.Index] += *p * dt
		d.recQB[q.Index] += *b * dt
		qPkts += *p * dt
	}
	if len(seen) != len(d.queuePkts) {
		t.Errorf("sample %d: %s %s queues sampled %v, ethtool has %d", i, vdNIC, d.dir, seen, len(d.queuePkts))
	}
	// Up to each sample, the queues add up to the NIC but for the
	// frames that arrived between the two reads of one reading
	// (sysfs, then ethtool: tens of milliseconds apart under a
	// loaded TCG): they count in this sample by one counter and
	// in the next by the other, so the gap never grows past one
	// sample's frames, however slow the reads.
	var queueSum float64
	for _, n := range d.recQ {
		queueSum += n
	}
	diff := math.Abs(queueSum - d.rec)
	if diff > 5+math.Max(qPkts, pps*dt) {
		t.Errorf("up to sample %d: %s %s queues moved %.1f frames, the NIC %.1f (this sample %.1f and %.1f)", i, vdNIC, d.dir, queueSum, d.rec, qPkts, pps*dt)
	}
	return diff
}

// vdRecordTotals holds d's sums over the whole record against its counters.
func vdRecordTotals(t *testing.T, d *vdDir) {
	t.Helper()
	// Over the record the reads' skew cancels out (it is the same
	// counters at the first and the last reading), and the window
	// holds every ping: the first reading is taken before the
	// command starts, and the command outlives ping by more than two
	// intervals.
	if d.rec < d.ping-0.01 || d.rec > d.pkts+0.01 {
		t.Errorf("%s: the record's samples add up to %.2f frames; ping counted %v, sysfs %v", d.dir, d.rec, d.ping, d.pkts)
	}
	if d.recB < d.ping*vdPingBytes-0.5 || d.recB > d.bytes+0.5 {
		t.Errorf("%s: the record's samples add up to %.1f bytes; ping's frames are %v, sysfs counted %v", d.dir, d.recB, d.ping*vdPingBytes, d.bytes)
	}
	// Frame bits are the hardware's octets: driver bytes + 4 per frame.
	if fb := d.recB + 4*d.rec; fb > d.hwOctets+0.5 || d.hwOctets-fb > (d.hwPkts-d.rec)*vdMaxFrame+0.5 {
		t.Errorf("%s: the record's frame bytes %.1f; the 82576 counted %v octets in %v frames", d.dir, fb, d.hwOctets, d.hwPkts)
	}
	for q, want := range d.queuePkts {
		if got := d.recQ[q]; got > want+0.01 || want-got > d.stray+0.01 {
			t.Errorf("%s queue %d: the record's samples add up to %.2f frames, ethtool's %s_queue_%d_packets moved %v", d.dir, q, got, d.dir, q, want)
		}
		if got, want := d.recQB[q], d.queueBytes[q]; got > want+0.5 || want-got > d.stray*vdMaxFrame+0.5 {
			t.Errorf("%s queue %d: the record's samples add up to %.1f bytes, ethtool's %s_queue_%d_bytes moved %v", d.dir, q, got, d.dir, q, want)
		}
	}
	if rq := sum(d.recQ); math.Abs(rq-d.rec) > 2 {
		t.Errorf("%s: over the record the queues add up to %.2f frames, the NIC to %.2f", d.dir, rq, d.rec)
	}
	t.Logf("%s: ping %v (+%v late), sysfs %v frames / %v bytes (%v more), ethtool queues %v / hardware %v frames %v octets; record %.1f frames, %.0f bytes, per queue %v",
		d.dir, d.ping, d.late, d.pkts, d.bytes, d.stray, d.queuePkts, d.hwPkts, d.hwOctets, d.rec, d.recB, round1(d.recQ))
}

// vdVerdictVsCounters: the verdict's window is the run's span, from the
// first sample that moved to the last, with every sample that was not
// quiet; its traffic is the record's over that span and the counters' but
// for what the span leaves out.
func vdVerdictVsCounters(t *testing.T, v *monitor.Verdict, rec *monitor.Record, dirs []*vdDir, r vdRecordSums, p vdPing) {
	t.Helper()
	if v.Samples != len(rec.Samples) || v.ActiveSamples < r.busy || v.ActiveSamples > v.Samples ||
		v.ActiveSeconds <= 0 || v.ActiveSeconds > r.total+1e-9 {
		t.Errorf("verdict over %d samples, %d in its span (%.3f s); the record has %d over %.3f s, %d of them not quiet",
			v.Samples, v.ActiveSamples, v.ActiveSeconds, len(rec.Samples), r.total, r.busy)
	}
	var gapBits, strayBits float64
	for _, d := range dirs {
		d.verdict = trafficOf(v, vdNIC, d.dir)
		if d.verdict == nil {
			t.Fatalf("verdict has no %s %s traffic: %+v", vdNIC, d.dir, v.Traffic)
		}
		vdVerdictDir(t, v, d, p)
		gapBits += frameBits(d.bytes, d.pkts) - d.verdict.AchievedMbps*1e6*v.ActiveSeconds
		strayBits += d.stray * vdMaxFrame * 8
	}
	// What the verdict leaves out of the counters is at most the quiet
	// samples' frames and the strays outside the record.
	bound := r.quietBits + strayBits
	if gapBits < -1 || gapBits > bound+1 {
		t.Errorf("the counters hold %.0f frame bits more than the verdict's span; the %d samples outside it (quiet ones hold %.0f, peak %.3f Mb/s) and %v strays allow %.0f",
			gapBits, v.Samples-v.ActiveSamples, r.quietBits, r.peakMbps, dirs[0].stray+dirs[1].stray, bound)
	}
	t.Logf("the verdict's span leaves out %.0f of the counters' frame bits (%.1f %%); bound %.0f (quiet samples %.0f, peak %.3f Mb/s)",
		gapBits, 100*gapBits/(frameBits(dirs[0].bytes, dirs[0].pkts)+frameBits(dirs[1].bytes, dirs[1].pkts)), bound, r.quietBits, r.peakMbps)

	for _, c := range v.Ceilings {
		if c.Layer == monitor.BoundEthernet {
			t.Errorf("ethernet ceiling %+v; an emulated NIC's nominal speed is none", c)
		}
	}
	if len(v.Losses) > 0 {
		t.Errorf("verdict losses %+v; the guest's counters show none", v.Losses)
	}
}

// vdVerdictDir holds the verdict's traffic in d's direction (d.verdict)
// against the record's samples, the counters and ping's own rate.
func vdVerdictDir(t *testing.T, v *monitor.Verdict, d *vdDir, p vdPing) {
	t.Helper()
	tr := d.verdict
	// Its frames are the record's over the span: at least those of
	// every sample not quiet, at most the record's.
	if got := tr.FramesPerS * v.ActiveSeconds; got < d.busy-0.5 || got > d.rec+0.5 {
		t.Errorf("verdict %s: %.3f frames/s over %.3f s is %.1f frames; the record's samples not quiet hold %.1f, all of them %.1f",
			d.dir, tr.FramesPerS, v.ActiveSeconds, got, d.busy, d.rec)
	}
	// Against the counters: the verdict weighs no frame the NIC did
	// not count...
	if got := tr.FramesPerS * v.ActiveSeconds; got > d.pkts+0.01 {
		t.Errorf("verdict %s: %.3f frames/s over %.3f s is %.1f frames; sysfs counted %v", d.dir, tr.FramesPerS, v.ActiveSeconds, got, d.pkts)
	}
	// ...its frames are the counters' frames: ping's 1442 bytes + FCS,
	// off by the strays (late replies are echoes too) and by the
	// read skew at both edges of its window.
	tol := d.stray*(vdPingBytes+4)/d.pkts + 2*vdReadSkew*vdMaxFrame/d.busy
	hw := d.hwOctets / d.hwPkts
	if math.Abs(tr.MeanFrameBytes-d.groundFrameB) > tol || math.Abs(tr.MeanFrameBytes-hw) > tol {
		t.Errorf("verdict %s: %.3f bytes/frame; sysfs (bytes + 4 × frames) / frames is %.3f, the 82576's octets / frames %.3f (tolerance %.3f)",
			d.dir, tr.MeanFrameBytes, d.groundFrameB, hw, tol)
	}
	// ...and its rate is ping's own, as /proc/uptime timed it around
	// ping: that time also holds ping's start and exit, which under a
	// loaded TCG took up to 0.7 s of 4.3 (109.6 frames/s in the span
	// against 90.7 over ping's life), and its pacing jitter; 25 %
	// leaves room for a loaded host (an idle one: 4 % or less).
	if r := float64(p.sent) / p.s; math.Abs(tr.FramesPerS-r) > 0.25*r {
		t.Errorf("verdict %s: %.1f frames/s; ping sent %d requests in %.2f s, %.1f/s", d.dir, tr.FramesPerS, p.sent, p.s, r)
	}
	t.Logf("verdict %s: %.1f frames/s, %.3f Mb/s, %.2f bytes/frame over %.2f s (%d of %d samples) = %.0f frames; sysfs %v frames at %.2f bytes/frame; ping's own rate %.1f/s over %.2f s",
		d.dir, tr.FramesPerS, tr.AchievedMbps, tr.MeanFrameBytes, v.ActiveSeconds, v.ActiveSamples, v.Samples,
		tr.FramesPerS*v.ActiveSeconds, d.pkts, d.groundFrameB, float64(p.sent)/p.s, p.s)
}

// vdBound: a few Mb/s of pings on a gigabit port with its PCIe link not
// modelled (emulated): no physical ceiling is near, nothing was dropped,
// ping paces itself. Under TCG a vCPU can still read busy (the emulation
// is slow, the host loaded): then a core or the command's thread at 90 %
// or more is the honest answer.
func vdBound(t *testing.T, v *monitor.Verdict) {
	t.Helper()
	switch v.Bound {
	case monitor.BoundOutside:
		for _, c := range v.Ceilings {
			if c.Layer != monitor.LayerCard && c.Share >= 0.9 {
				t.Errorf("outside_host, but %s %s is at %.0f %%", c.Layer, c.Subject, 100*c.Share)
			}
		}
	case monitor.BoundCore, monitor.BoundCommand:
		if v.Limit == nil || v.Limit.Share < 0.9 {
			t.Errorf("bound %s without a ceiling at 90 %%: %+v", v.Bound, v.Limit)
		}
		t.Logf("the emulation saturated a CPU: %s", v.Summary)
	default:
		t.Errorf("bound %s; a few Mb/s of pings on an idle gigabit port is outside_host (or, under a slow emulation, core or command): %s", v.Bound, v.Summary)
	}
	t.Logf("verdict: %s: %s", v.Bound, v.Summary)
}

// checkVerdictLines: the record's summary line and the one `monitor --json`
// printed carry the same verdict, and it is the one ReadRecord judges
// offline from the record's samples and limits.
func checkVerdictLines(t *testing.T, record string, mon Section, offline *monitor.Verdict) {
	t.Helper()
	lineVerdict := func(what, s string) json.RawMessage {
		var last string
		sc := bufio.NewScanner(strings.NewReader(s))
		sc.Buffer(nil, monitor.MaxLineBytes)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				last = l
			}
		}
		var sum struct {
			Type    string          `json:"type"`
			Verdict json.RawMessage `json:"verdict"`
		}
		if err := json.Unmarshal([]byte(last), &sum); err != nil || sum.Type != "summary" || len(sum.Verdict) == 0 {
			t.Fatalf("%s: the last line is no summary with a verdict (%v): %.300s", what, err, last)
		}
		return sum.Verdict
	}
	if mon.RC >= 3 {
		t.Fatalf("monitor exited %d: %s", mon.RC, mon.Stderr)
	}
	fromRecord, fromStdout := lineVerdict("record", record), lineVerdict("monitor --json", mon.Stdout)
	var a, b any
	_ = json.Unmarshal(fromRecord, &a)
	_ = json.Unmarshal(fromStdout, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the record's verdict differs from the one monitor printed:\n%s\n%s", fromRecord, fromStdout)
	}
	var run monitor.Verdict
	if err := json.Unmarshal(fromRecord, &run); err != nil {
		t.Fatal(err)
	}
	if run.Bound != offline.Bound || run.ActiveSamples != offline.ActiveSamples || !reflect.DeepEqual(run.Traffic, offline.Traffic) {
		t.Errorf("the run's verdict (%s, %d active, %+v) differs from ReadRecord's (%s, %d active, %+v)",
			run.Bound, run.ActiveSamples, run.Traffic, offline.Bound, offline.ActiveSamples, offline.Traffic)
	}
}

// quietSamples marks the samples the run's span may leave out: their NICs
// moved under a tenth of the busiest sample's frame Mb/s (both
// directions), or under 1 Mb/s and 1000 frames/s. It returns the peak.
func quietSamples(xs []irq.Sample) ([]bool, float64) {
	mbps, pps := make([]float64, len(xs)), make([]float64, len(xs))
	peak := 0.0
	for i, x := range xs {
		for _, n := range x.NICs {
			mbps[i] += (frameBits(n.RXBytesPerS, n.RXPacketsPerS) + frameBits(n.TXBytesPerS, n.TXPacketsPerS)) / 1e6
			pps[i] += n.RXPacketsPerS + n.TXPacketsPerS
		}
		peak = math.Max(peak, mbps[i])
	}
	out := make([]bool, len(xs))
	for i, x := range xs {
		out[i] = x.IntervalS <= 0 || mbps[i] < 0.1*peak || mbps[i] < 1 && pps[i] < 1000
	}
	return out, peak
}

// frameBits is traffic in Ethernet frame bits: driver bytes (no FCS) plus
// 4 bytes a frame.
func frameBits(bytes, frames float64) float64 { return (bytes + 4*frames) * 8 }

func nicRate(x irq.Sample, name string) *irq.NICRate {
	for i := range x.NICs {
		if x.NICs[i].Name == name {
			return &x.NICs[i]
		}
	}
	return nil
}

func trafficOf(v *monitor.Verdict, nic, dir string) *monitor.Traffic {
	for i := range v.Traffic {
		if v.Traffic[i].NIC == nic && v.Traffic[i].Direction == dir {
			return &v.Traffic[i]
		}
	}
	return nil
}

func sum(m map[int]float64) float64 {
	s := 0.0
	for _, v := range m {
		s += v
	}
	return s
}

func round1(m map[int]float64) map[int]float64 {
	out := map[int]float64{}
	for k, v := range m {
		out[k] = math.Round(v*10) / 10
	}
	return out
}

// near reports whether a and b agree to within rel of the larger.
func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))+1e-12
}
