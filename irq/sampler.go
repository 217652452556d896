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
	"github.com/prometheus/procfs"
)

// Sampler reads the counters at each interval and turns two readings into a
// Sample. It is not safe for concurrent use.
type Sampler struct {
	o           options
	proc        procfs.FS
	nics        []nicinfo.NIC
	queues      []NICQueues
	softirqCPUs []int
	prev, cur   *reading
	buf         []byte // /proc/interrupts, reused
	watch       taskWatch
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
	missing   []string
}

// NewSampler takes the first reading, maps the queues of nics to their IRQs,
// and returns a Sampler whose Next yields the load since the previous
// reading. nics may be empty: CPU rates are still sampled.
func NewSampler(ctx context.Context, nics []nicinfo.NIC, opts ...Option) (*Sampler, error) {
	o := newOptions(opts)
	p, err := procfs.NewFS(o.root.Path("/proc"))
	if err != nil {
		return nil, err
	}
	s := &Sampler{o: o, proc: p, nics: slices.Clone(nics), prev: new(reading), cur: new(reading)}
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
	if r.stat, r.accounted, err = readStat(s.proc); err != nil {
		return fmt.Errorf("/proc/stat: %w", err)
	}
	if r.net, err = readSoftirqs(s.o.root, s.proc, &s.softirqCPUs); err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrMalformed) {
			return fmt.Errorf("/proc/softirqs: %w", err)
		}
		r.missing = append(r.missing, "/proc/softirqs: "+err.Error())
	}
	if r.softnet, err = readSoftnet(s.proc, sortedKeys(r.stat)); err != nil {
		r.missing = append(r.missing, "/proc/net/softnet_stat: "+err.Error())
	}
	r.links, r.linkErr = perNIC(s.nics, s.o.stats.counters)
	if s.o.queueStats != nil {
		r.queues, r.queueErr = perNIC(s.nics, s.o.queueStats.counters)
	} else {
		r.queues, r.queueErr = map[string]queueCounters{}, map[string]error{}
	}
	s.readLosses(r)
	s.readTasks(r)
	s.readPCIe(r)
	return nil
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
