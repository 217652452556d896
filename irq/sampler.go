package irq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/nicdiag/nicdiag/nicinfo"
)

// Sampler reads the counters at each interval and turns two readings into a
// Sample. It is not safe for concurrent use.
type Sampler struct {
	o           options
	nics        []nicinfo.NIC
	queues      []NICQueues
	softirqCPUs []int
	prev, cur   *reading
	buf         []byte // /proc/interrupts, reused
	fbuf        []byte // the other /proc files, reused
	watch       taskWatch
	clockCPUs   []int         // the CPUs whose clock the next reading reads (clock.go)
	maxKHz      map[int]int64 // their maximum clock, read once
	noClock     map[int]bool  // CPUs without scaling_cur_freq
	clockBuf    []byte
}

// reading is one read of every source.
type reading struct {
	t         time.Time
	ints      Interrupts
	stat      map[int]cpuTimes
	accounted bool
	net       netSoftirqs
	softnet   map[int]softnet
	links     map[string]linkCounters
	linkErr   map[string]error
	queues    map[string]queueCounters
	queueErr  map[string]error
	losses    map[string]lossCounters
	tasks     taskReading // the watched tree
	pcie      []pciRead
	khz       map[int]int64 // the clock CPUs' scaling_cur_freq
	missing   []string
}

// NewSampler takes the first reading, maps the queues of nics to their IRQs,
// and returns a Sampler whose Next yields the load since the previous
// reading. nics may be empty: CPU rates are still sampled.
func NewSampler(ctx context.Context, nics []nicinfo.NIC, opts ...Option) (*Sampler, error) {
	o := newOptions(opts)
	s := &Sampler{o: o, nics: slices.Clone(nics), prev: new(reading), cur: new(reading)}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.read(s.prev); err != nil {
		return nil, err
	}
	s.remap(&s.prev.ints)
	return s, nil
}

// Queues returns the NIC → IRQ map in use.
func (s *Sampler) Queues() []NICQueues { return s.queues }

// Next waits until an interval has passed since the previous reading, reads
// again and returns the rates in between. It returns ctx.Err() when ctx is
// done first.
func (s *Sampler) Next(ctx context.Context) (Sample, error) {
	wait := time.Until(s.prev.t.Add(s.o.interval))
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return Sample{}, ctx.Err()
		case <-t.C:
		}
	} else if err := ctx.Err(); err != nil {
		return Sample{}, err
	}
	if err := s.read(s.cur); err != nil {
		return Sample{}, err
	}
	if layoutChanged(&s.prev.ints, &s.cur.ints) {
		s.remap(&s.cur.ints)
	}
	out := s.rates(s.prev, s.cur)
	s.prev, s.cur = s.cur, s.prev
	return out, nil
}

func (s *Sampler) remap(x *Interrupts) {
	s.queues = s.queues[:0]
	for _, n := range s.nics {
		s.queues = append(s.queues, mapQueues(s.o.root, n, x))
	}
}

func layoutChanged(a, b *Interrupts) bool {
	if len(a.Lines) != len(b.Lines) {
		return true
	}
	for i := range a.Lines {
		if a.Lines[i].Name != b.Lines[i].Name || a.Lines[i].Actions != b.Lines[i].Actions {
			return true
		}
	}
	return false
}

// read fills r. /proc/interrupts and /proc/stat are required; the rest is
// named in r.missing when absent.
func (s *Sampler) read(r *reading) error {
	r.missing = r.missing[:0]
	r.t = s.o.now()
	var err error
	if s.buf, err = readInto(s.o.root.Path(interruptsFile), s.buf); err != nil {
		return err
	}
	if err := ParseInterrupts(s.buf, &r.ints); err != nil {
		return err
	}
	if err := s.readStat(r); err != nil {
		return err
	}
	if err := s.readSoftirqs(r); err != nil {
		return err
	}
	s.readSoftnet(r)
	r.links, r.linkErr = perNIC(s.nics, s.o.stats.counters)
	if s.o.queueStats != nil {
		r.queues, r.queueErr = perNIC(s.nics, s.o.queueStats.counters)
	} else {
		r.queues, r.queueErr = map[string]queueCounters{}, map[string]error{}
	}
	s.readLosses(r)
	s.readTasks(r)
	s.readPCIe(r)
	s.readClocks(r)
	return nil
}

// readStat reads /proc/stat into r.stat and r.accounted.
func (s *Sampler) readStat(r *reading) error {
	var err error
	if s.fbuf, err = s.o.root.ReadInto(statFile, s.fbuf, maxProcFile); err != nil {
		return fmt.Errorf("%s: %w", statFile, err)
	}
	if r.stat == nil {
		r.stat = make(map[int]cpuTimes)
	}
	r.accounted, err = parseStat(s.fbuf, r.stat)
	return err
}

// readSoftirqs reads /proc/softirqs into r.net; when it is absent or
// malformed, r.net is empty and r.missing says why.
func (s *Sampler) readSoftirqs(r *reading) error {
	var err error
	if s.fbuf, err = s.o.root.ReadInto(softirqsFile, s.fbuf, maxProcFile); err == nil {
		err = parseSoftirqs(s.fbuf, &s.softirqCPUs, &r.net)
	}
	if err != nil {
		clear(r.net.rx) // no rates from an older reading's counts
		clear(r.net.tx)
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
	if r.softnet == nil {
		r.softnet = make(map[int]softnet)
	}
	var err error
	if s.fbuf, err = s.o.root.ReadInto(softnetFile, s.fbuf, maxProcFile); err == nil {
		err = parseSoftnet(s.fbuf, r.stat, r.softnet)
	}
	if err != nil {
		clear(r.softnet)
		r.missing = append(r.missing, missingLine(softnetFile, err))
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

// perNIC reads one kind of counter for every NIC, keeping values and
// errors apart by interface name.
func perNIC[T any](nics []nicinfo.NIC, read func(iface string) (T, error)) (map[string]T, map[string]error) {
	vals := make(map[string]T, len(nics))
	errs := make(map[string]error)
	for _, n := range nics {
		v, err := read(n.Name)
		if err != nil {
			errs[n.Name] = err
			continue
		}
		vals[n.Name] = v
	}
	return vals, errs
}

// readInto reads the file at path (a host path) into buf's storage, growing
// it when needed, and returns the contents. /proc files report size 0, so it
// reads until EOF.
func readInto(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf[:0], err
	}
	defer f.Close()
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF || (err == nil && n == 0) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) > maxInterrupts {
			return buf, &fs.PathError{Op: "read", Path: path, Err: errors.New("larger than 64 MiB")}
		}
	}
}

// maxInterrupts bounds a /proc/interrupts read (8192 CPUs × 4096 IRQs is
// well under it).
const maxInterrupts = 64 << 20
