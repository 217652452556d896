package stack

import (
	"errors"
	"io/fs"
	"strconv"
)

// nsState is one network namespace read: its files, the previous
// reading's counts, and (live) its netlink sockets and flows.
type nsState struct {
	id     uint64
	path   string // "" for the caller's namespace (or the root's)
	main   bool   // WithInterfaces's namespace
	gen    uint32
	files  nsFiles
	opened bool

	prev     counters
	havePrev bool
	prevCT   ctStats
	haveCT   bool
	live     *liveNS // nil under a root
}

// close releases the namespace's files and sockets.
func (n *nsState) close() {
	n.files.close()
	n.opened = false
	n.live.close()
}

// name names the namespace in Missing lines.
func (n *nsState) name() string {
	if n.id == 0 {
		return "netns"
	}
	return "netns " + strconv.FormatUint(n.id, 10)
}

// readNamespace reads n's socket counters, buffers, conntrack and (live)
// flows and qdiscs into x.
func (s *Sampler) readNamespace(n *nsState, x *Sample) {
	if !n.opened {
		s.openFiles(n)
		n.opened = true
	}
	ns := Namespace{ID: n.id, Path: n.path}
	s.readCounters(n, &ns, x)
	ns.Buffers = s.readBuffers(n, x)
	s.readConntrack(n, &ns, x)
	x.Namespaces = append(x.Namespaces, ns)
	if n.live != nil {
		s.readLive(n, x)
	}
}

// missing notes in x that file could not be read in n.
func (n *nsState) missing(x *Sample, file string, err error) {
	x.Missing = append(x.Missing, n.name()+": "+file+": "+err.Error())
}

// readCounters reads the socket layer's counters.
func (s *Sampler) readCounters(n *nsState, ns *Namespace, x *Sample) {
	var c counters
	var err error
	if s.buf, err = n.files.read(fSNMP, s.buf); err == nil {
		err = parseTables(snmpFile, s.buf, &c)
	}
	if err == nil {
		if s.buf, err = n.files.read(fNetstat, s.buf); err == nil {
			err = parseTables(netstatFile, s.buf, &c)
		}
	}
	if err != nil {
		n.missing(x, "socket counters", err)
		n.havePrev = false
		return
	}
	if s.buf, err = n.files.read(fSNMP6, s.buf); err == nil {
		err = parseSNMP6(s.buf, &c)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // no IPv6: no snmp6
		n.missing(x, snmp6File, err)
	}
	if n.havePrev {
		d := c.delta(&n.prev)
		ns.Sockets = &d
	}
	n.prev, n.havePrev = c, true
}

// readBuffers reads the buffer sysctls; nil when none could be read.
func (s *Sampler) readBuffers(n *nsState, x *Sample) *Buffers {
	var b Buffers
	read := 0
	var err error
	for _, t := range []struct {
		i int
		v *[3]int64
	}{{fTCPRmem, &b.TCPRmem}, {fTCPWmem, &b.TCPWmem}} {
		if s.buf, err = n.files.read(t.i, s.buf); err == nil {
			*t.v, err = parseTriplet(nsFilePaths[t.i], s.buf)
		}
		if err != nil {
			n.missing(x, nsFilePaths[t.i], err)
			continue
		}
		read++
	}
	for _, t := range []struct {
		i int
		v *int64
	}{{fRmemMax, &b.RmemMax}, {fWmemMax, &b.WmemMax}, {fRmemDefault, &b.RmemDefault}, {fWmemDefault, &b.WmemDefault}} {
		if s.buf, err = n.files.read(t.i, s.buf); err == nil {
			*t.v, err = parseInt(nsFilePaths[t.i], s.buf)
		}
		if err != nil {
			n.missing(x, nsFilePaths[t.i], err)
			continue
		}
		read++
	}
	if read == 0 {
		return nil
	}
	return &b
}

// readConntrack reads the conntrack table's fill and statistics; a
// kernel without conntrack (no nf_conntrack_count) is ConntrackAbsent.
func (s *Sampler) readConntrack(n *nsState, ns *Namespace, x *Sample) {
	var c Conntrack
	var err error
	if s.buf, err = n.files.read(fCTCount, s.buf); err == nil {
		c.Count, err = parseInt(conntrackCountFile, s.buf)
	}
	if errors.Is(err, fs.ErrNotExist) {
		ns.ConntrackAbsent = true
		n.haveCT = false
		return
	}
	if err == nil {
		if s.buf, err = n.files.read(fCTMax, s.buf); err == nil {
			c.Max, err = parseInt(conntrackMaxFile, s.buf)
		}
	}
	if err != nil {
		n.missing(x, "conntrack", err)
		n.haveCT = false
		return
	}
	var st ctStats
	if s.buf, err = n.files.read(fCTStat, s.buf); err == nil {
		st, err = parseConntrackStat(s.buf)
	}
	if err != nil {
		n.missing(x, conntrackStatFile, err)
		n.haveCT = false
	} else {
		if n.haveCT {
			st.delta(&n.prevCT, &c)
		}
		n.prevCT, n.haveCT = st, true
	}
	ns.Conntrack = &c
}
