package irq

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"time"

	"github.com/nicdiag/nicdiag/nicinfo"
)

// Sampler reads the counters at each interval and turns two readings into a
// Sample. It keeps the files and sockets it reads open between readings:
// Close releases them. It is not safe for concurrent use.
type Sampler struct {
	o         options
	nics      []nicinfo.NIC
	queues    []NICQueues
	prev, cur *reading

	// /proc/interrupts: a reading parses the counts of the NICs' rows
	// (keep) and checks the others against layout, the rows as the last
	// layout parse found them; gen counts those parses.
	ints   kfile
	ibuf   []byte
	layout Interrupts
	gen    uint64
	keep   []bool  // by layout row
	qrow   [][]int // by NIC and queue: its layout row, -1 when none

	stat, softirqs, softnet kfile
	fw                      *fileWatch // of the files held off procfs and sysfs
	fbuf                    []byte     // the other /proc files and sysfs attributes, reused
	pci                     []pciFunc
	watch                   taskWatch
	clockCPUs               []int         // the CPUs whose clock the next reading reads (clock.go)
	maxKHz                  map[int]int64 // their maximum clock, read once
	noClock                 map[int]bool  // CPUs without scaling_cur_freq
	clockFiles              kfiles[int]
	clockBuf                []byte

	timer *time.Timer // NextInto's wait, reused

	// rates' scratch, and the storage of the pointers it hands out
	acol    []int
	d       []uint64
	nicIRQs []float64
	fslab   []float64
	uslab   []uint64
}

// keptFDs are the bare descriptors a Sampler's cleanup closes.
type keptFDs struct {
	conn *nsConn
	fw   *fileWatch
}

// reading is one read of every source.
type reading struct {
	t         time.Time
	ints      Interrupts
	gen       uint64 // the layout ints was parsed against
	stat      []cpuStat
	accounted bool
	net       netSoftirqs
	softnet   []cpuSoftnet
	nics      []nicReading // by Sampler.nics
	tasks     taskReading  // the watched tree
	pcie      []pciRead
	khz       map[int]int64 // the clock CPUs' scaling_cur_freq
	missing   []string
}

// nicReading is one NIC's counters at a reading.
type nicReading struct {
	link     linkCounters
	linkErr  error // why link was not read
	queued   bool  // per-queue counters were asked for
	queues   queueCounters
	queueErr error
	losses   lossList
}

// NewSampler takes the first reading, maps the queues of nics to their IRQs,
// and returns a Sampler whose Next yields the load since the previous
// reading. nics may be empty: CPU rates are still sampled.
func NewSampler(ctx context.Context, nics []nicinfo.NIC, opts ...Option) (*Sampler, error) {
	o := newOptions(opts)
	fw := new(fileWatch)
	s := &Sampler{o: o, nics: slices.Clone(nics), prev: new(reading), cur: new(reading), fw: fw,
		// /proc/stat and /proc/softirqs are one record each (single_open):
		// one read is the whole file.
		ints: kfile{path: interruptsFile, w: fw}, stat: kfile{path: statFile, once: true, w: fw}, softirqs: kfile{path: softirqsFile, once: true, w: fw},
		softnet: kfile{path: softnetFile, w: fw}, pci: newPCIFuncs(o.pcie, fw)}
	switch st := o.stats.(type) {
	case *sysfsStats:
		st.w = fw
	case connLinkStats:
		if st.sysfs != nil {
			st.sysfs.w = fw
		}
	}
	s.watch.dirs.w, s.watch.stats.w, s.watch.children.w, s.clockFiles.w = fw, fw, fw, fw
	// Files close themselves when collected; the sockets and the inotify
	// instance are bare descriptors.
	runtime.AddCleanup(s, func(k keptFDs) { k.conn.close(); k.fw.close() }, keptFDs{o.conn, fw})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.read(s.prev); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the files and sockets the sampler keeps open; Next opens
// them again. Those of a Sampler dropped without Close are closed when it
// is garbage collected, not promptly.
func (s *Sampler) Close() error {
	for _, k := range []*kfile{&s.ints, &s.stat, &s.softirqs, &s.softnet} {
		k.close()
	}
	switch st := s.o.stats.(type) {
	case *sysfsStats:
		st.close()
	case connLinkStats:
		if st.sysfs != nil {
			st.sysfs.close()
		}
	}
	s.o.conn.close()
	for i := range s.pci {
		s.pci[i].close()
	}
	s.watch.closeFiles()
	s.clockFiles.closeAll()
	s.fw.close()
	return nil
}

// Queues returns the NIC → IRQ map in use.
func (s *Sampler) Queues() []NICQueues { return s.queues }

// Next waits until an interval has passed since the previous reading, reads
// again and returns the rates in between. It returns ctx.Err() when ctx is
// done first. The Sample is the caller's: the Sampler keeps no reference
// to it.
func (s *Sampler) Next(ctx context.Context) (Sample, error) {
	var x Sample
	if err := s.NextInto(ctx, &x); err != nil {
		return Sample{}, err
	}
	return x, nil
}

// NextInto is Next writing the sample into *dst and reusing the storage dst
// holds: its slices (CPUs, NICs and their Queues and Losses, Threads,
// PCIe, Missing) and the values its pointer fields point to (IRQPct, MHz,
// the per-queue rates, the AER counts), overwritten in place. A sampler
// that reads the same sources every interval then allocates nothing.
//
// Every value reachable from dst is overwritten: dst must be a Sample that
// only NextInto filled (or a zero one) and that shares no storage with a
// Sample kept elsewhere; a copy of a Sample value shares its slices and
// pointers. To keep samples, keep Next's, or take turns with two Samples
// and copy out what is kept. On error *dst is left as it was.
func (s *Sampler) NextInto(ctx context.Context, dst *Sample) error {
	wait := time.Until(s.prev.t.Add(s.o.interval))
	if wait > 0 {
		if s.timer == nil {
			s.timer = time.NewTimer(wait)
		} else {
			s.timer.Reset(wait) // no stale tick since Go 1.23
		}
		select {
		case <-ctx.Done():
			s.timer.Stop()
			return ctx.Err()
		case <-s.timer.C:
		}
	} else if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.read(s.cur); err != nil {
		return err
	}
	s.rates(s.prev, s.cur, dst)
	s.prev, s.cur = s.cur, s.prev
	return nil
}

// remap maps the NICs' queues on s.layout, a layout just parsed, and marks
// their rows for the readings to keep.
func (s *Sampler) remap() {
	x := &s.layout
	s.queues = s.queues[:0]
	for _, n := range s.nics {
		s.queues = append(s.queues, mapQueues(s.o.root, n, x))
	}
	s.keep = resize(s.keep, len(x.Lines))
	clear(s.keep)
	s.qrow = resize(s.qrow, len(s.queues))
	for i, nq := range s.queues {
		rows := s.qrow[i][:0]
		for _, q := range nq.Queues {
			row := x.Index(q.IRQ)
			rows = append(rows, row)
			if row >= 0 {
				s.keep[row] = true
			}
		}
		s.qrow[i] = rows
	}
}

// maxLayoutTries bounds the layout parses of one reading whose next parse
// finds the layout changed again; the reading then keeps every row.
const maxLayoutTries = 3

// readInterrupts reads /proc/interrupts into r.ints: against the layout,
// the counts of the NICs' rows alone; when the layout changed (or at the
// first reading), the layout first (no counts kept), then the NICs'
// queues are mapped on it, then the reading against it.
func (s *Sampler) readInterrupts(r *reading) error {
	for try := 0; ; try++ {
		var err error
		if s.gen > 0 {
			s.ibuf, err = readInterrupts(s.o.root, &s.ints, s.ibuf, &r.ints, keepSome, &s.layout, s.keep)
			if err == nil {
				r.gen = s.gen
				return nil
			}
			if err != errLayout {
				return err
			}
		}
		if try == maxLayoutTries { // changing under us: take one in full
			if s.ibuf, err = readInterrupts(s.o.root, &s.ints, s.ibuf, &r.ints, keepAll, nil, nil); err != nil {
				return err
			}
			s.layout.CPUs = append(s.layout.CPUs[:0], r.ints.CPUs...)
			s.layout.Lines = append(s.layout.Lines[:0], r.ints.Lines...)
			s.gen++
			s.remap()
			r.gen = s.gen
			return nil
		}
		if s.ibuf, err = readInterrupts(s.o.root, &s.ints, s.ibuf, &s.layout, keepNone, nil, nil); err != nil {
			return err
		}
		s.gen++
		s.remap()
	}
}

// read fills r. /proc/interrupts and /proc/stat are required; the rest is
// named in r.missing when absent.
func (s *Sampler) read(r *reading) error {
	r.missing = r.missing[:0]
	r.t = s.o.now()
	s.fw.poll()
	if err := s.readInterrupts(r); err != nil {
		return err
	}
	if err := s.readStat(r); err != nil {
		return err
	}
	if err := s.readSoftirqs(r); err != nil {
		return err
	}
	s.readSoftnet(r)
	if s.o.conn != nil {
		s.o.conn.begin()
	}
	s.readNICs(r)
	s.readLosses(r)
	if s.o.conn != nil {
		s.o.conn.end()
	}
	s.readTasks(r)
	s.readPCIe(r)
	s.readClocks(r)
	return nil
}

// readStat reads /proc/stat into r.stat and r.accounted.
func (s *Sampler) readStat(r *reading) error {
	var err error
	if s.fbuf, err = s.stat.read(s.o.root, s.fbuf, maxProcFile); err != nil {
		return fmt.Errorf("%s: %w", statFile, err)
	}
	r.stat, r.accounted, err = parseStat(s.fbuf, r.stat)
	return err
}

// readSoftirqs reads /proc/softirqs into r.net; when it is absent or
// malformed, r.net is empty and r.missing says why.
func (s *Sampler) readSoftirqs(r *reading) error {
	var err error
	if s.fbuf, err = s.softirqs.read(s.o.root, s.fbuf, maxProcFile); err == nil {
		err = parseSoftirqs(s.fbuf, &r.net)
	}
	if err != nil {
		r.net.clear() // no rates from an older reading's counts
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrMalformed) {
			return fmt.Errorf("%s: %w", softirqsFile, err)
		}
		r.missing = append(r.missing, missingLine(softirqsFile, err))
	}
	return nil
}

// readSoftnet reads /proc/net/softnet_stat into r.softnet, whose CPUs
// are those of r.stat; when it cannot, r.softnet is empty and r.missing
// says why.
func (s *Sampler) readSoftnet(r *reading) {
	var err error
	if s.fbuf, err = s.softnet.read(s.o.root, s.fbuf, maxProcFile); err == nil {
		r.softnet, err = parseSoftnet(s.fbuf, r.stat, r.softnet)
	}
	if err != nil {
		r.softnet = r.softnet[:0]
		r.missing = append(r.missing, missingLine(softnetFile, err))
	}
}

// readNICs reads each NIC's interface counters and, when on, its
// per-queue counters into r.nics.
func (s *Sampler) readNICs(r *reading) {
	r.nics = resize(r.nics, len(s.nics))
	for i, n := range s.nics {
		nr := &r.nics[i]
		nr.link, nr.linkErr = s.o.stats.counters(n.Name)
		nr.queued = s.o.queueStats != nil
		nr.queueErr = nil
		switch q := s.o.queueStats.(type) {
		case nil:
			nr.queues.clear()
		case queueStatsInto:
			if nr.queueErr = q.countersInto(n.Name, &nr.queues); nr.queueErr != nil {
				nr.queues.clear()
			}
		default:
			if nr.queues, nr.queueErr = q.counters(n.Name); nr.queueErr != nil {
				nr.queues = queueCounters{}
			}
		}
	}
}

// missingLine names file and what went wrong reading it for
// Sample.Missing, once: a *ParseError names the file already.
func missingLine(file string, err error) string {
	if _, ok := err.(*ParseError); ok {
		return err.Error()
	}
	return file + ": " + err.Error()
}
