package stack

import (
	"errors"
	"net/netip"

	"golang.org/x/sys/unix"
)

// flowPrev is a socket's cumulative counts at the previous reading.
type flowPrev struct {
	sent, retrans, acked, recv uint64
	segsOut, segsIn, retrs     uint32
	busy, rwnd, sndbuf         uint64
	drops                      uint32
	gen                        uint32
}

// maxRoutes bounds a namespace's cache of peers' interfaces.
const maxRoutes = 4096

// readFlows dumps n's TCP and UDP sockets, keeps the run's as flows in x
// with their interfaces, and returns the indexes of those interfaces.
func (s *Sampler) readFlows(n *nsState, x *Sample) map[int]bool {
	l := n.live
	fs := flowSet{s: s, n: n, x: x, perIf: map[int]int{}}
	if s.pid == 0 && len(s.o.ifaces) > 0 {
		fs.addrs = map[netip.Addr]bool{}
		if n.main {
			s.ifaceAddrs(n, fs.addrs, x)
		}
	}
	for _, q := range [...]struct{ family, proto uint8 }{{unix.AF_INET, unix.IPPROTO_TCP}, {unix.AF_INET6, unix.IPPROTO_TCP},
		{unix.AF_INET, unix.IPPROTO_UDP}, {unix.AF_INET6, unix.IPPROTO_UDP}} {
		if l.diag == nil {
			n.missing(x, "sock_diag", l.diagErr)
			break
		}
		fs.proto = q.proto
		if err := l.diag.dump(q.family, q.proto, fs.add); err != nil {
			if q.proto == unix.IPPROTO_UDP && errors.Is(err, ErrNotApplicable) {
				continue // no UDP sock_diag in this kernel
			}
			n.missing(x, "sock_diag", err)
		}
	}
	for k, p := range l.flows {
		if p.gen != s.gen {
			delete(l.flows, k)
		}
	}
	for k, g := range l.others {
		if g != s.gen {
			delete(l.others, k)
		}
	}
	l.dumped = true
	ifs := map[int]bool{}
	for idx, c := range fs.perIf {
		ifs[idx] = true
		x.Interfaces = append(x.Interfaces, Interface{Netns: n.id, Name: l.linkName(idx), Index: idx, Flows: c})
	}
	return ifs
}

// ifaceAddrs adds the addresses of WithInterfaces's interfaces to a.
func (s *Sampler) ifaceAddrs(n *nsState, a map[netip.Addr]bool, x *Sample) {
	for _, name := range s.o.ifaces {
		link, err := n.live.nlh.LinkByName(name)
		if err != nil {
			n.missing(x, "interface "+name, err)
			continue
		}
		as, err := n.live.nlh.AddrList(link, unix.AF_UNSPEC)
		if err != nil {
			n.missing(x, "addresses of "+name, err)
			continue
		}
		for _, ad := range as {
			if ip, ok := netip.AddrFromSlice(ad.IP); ok {
				a[ip.Unmap()] = true
			}
		}
	}
}

// flowSet collects the flows of one namespace's dumps.
type flowSet struct {
	s     *Sampler
	n     *nsState
	x     *Sample
	proto uint8
	addrs map[netip.Addr]bool // nil: not matched by address
	perIf map[int]int
}

// ours reports whether the socket m is the run's, and which process of
// the run holds it.
func (fs *flowSet) ours(m *diagMsg) (owner, bool) {
	if fs.s.pid > 0 {
		o, ok := fs.s.owners[m.inode]
		return o, ok
	}
	local := ipOf(m.family, m.src)
	if fs.addrs != nil {
		return owner{}, fs.addrs[local]
	}
	return owner{}, !local.IsLoopback()
}

// add takes one dumped socket.
func (fs *flowSet) add(m *diagMsg) {
	l, gen := fs.n.live, fs.s.gen
	o, ok := fs.ours(m)
	if !ok {
		l.others[m.cookie] = gen
		return
	}
	cur := prevOf(m, gen)
	p, had := l.flows[m.cookie]
	_, wasOther := l.others[m.cookie]
	l.flows[m.cookie] = cur
	delete(l.others, m.cookie)
	if !had && (!l.dumped || wasOther) {
		return // counts from before the run, or from before it was the run's
	}
	f := flowOf(m, fs.proto, fs.n.id, o)
	f.First = !had
	f.count(&cur, &p)
	if idx := fs.route(m); idx > 0 {
		fs.perIf[idx]++
		f.Iface = l.linkName(idx)
	}
	fs.x.Flows = append(fs.x.Flows, f)
}

// route returns the index of the interface the socket's traffic leaves
// by: the one it is bound to, else the route to its peer (0: none).
func (fs *flowSet) route(m *diagMsg) int {
	if m.ifindex != 0 {
		return int(m.ifindex)
	}
	peer := ipOf(m.family, m.dst)
	if peer.IsUnspecified() {
		return 0
	}
	l := fs.n.live
	if idx, ok := l.routes[peer]; ok {
		return idx
	}
	idx := 0
	if rs, err := l.nlh.RouteGet(peer.AsSlice()); err == nil && len(rs) > 0 {
		idx = rs[0].LinkIndex
	}
	if len(l.routes) >= maxRoutes {
		clear(l.routes)
	}
	l.routes[peer] = idx
	return idx
}

// prevOf returns m's cumulative counts.
func prevOf(m *diagMsg, gen uint32) flowPrev {
	t := &m.info
	p := flowPrev{sent: t.bytesSent, retrans: t.bytesRetrans, acked: t.bytesAcked, recv: t.bytesRecv,
		segsOut: t.segsOut, segsIn: t.segsIn, retrs: t.totalRetrans, busy: t.busy, rwnd: t.rwndLimited,
		sndbuf: t.sndbufLimited, gen: gen}
	if m.memN > memDrops {
		p.drops = m.mem[memDrops]
	}
	return p
}

// flowOf returns m's state as a Flow, without counts.
func flowOf(m *diagMsg, proto uint8, ns uint64, o owner) Flow {
	local, peer := m.addrs()
	f := Flow{Netns: ns, Proto: "udp", State: stateName(m.state), Local: local, Peer: peer, Cookie: m.cookie,
		Inode: m.inode, PID: o.pid, Comm: o.comm}
	if m.memN > memWmemQueued {
		f.RmemAlloc, f.Rcvbuf, f.Sndbuf, f.WmemQueued = m.mem[memRmemAlloc], m.mem[memRcvbuf], m.mem[memSndbuf], m.mem[memWmemQueued]
	}
	if proto != unix.IPPROTO_TCP || !m.hasInfo {
		return f
	}
	t := &m.info
	f.Proto = "tcp"
	f.RTTUS, f.MinRTTUS, f.RcvRTTUS, f.Cwnd, f.SndMSS = t.rtt, t.minRTT, t.rcvRTT, t.cwnd, t.sndMSS
	f.DeliveryRate, f.AppLimited, f.RcvSpace, f.Timers = t.deliveryRate, t.appLimited != 0, t.rcvSpace, t.hasTimers
	if t.hasWnds {
		w := t.sndWnd
		f.SndWnd = &w
	}
	if t.hasRcvWnd {
		w := t.rcvWnd
		f.RcvWnd = &w
	}
	return f
}

// count sets f's counts from prev to cur (from 0 when prev is zero: a
// socket new in the interval).
func (f *Flow) count(cur, prev *flowPrev) {
	f.BytesSent = sub64(cur.sent, prev.sent)
	f.BytesRetrans = sub64(cur.retrans, prev.retrans)
	f.BytesAcked = sub64(cur.acked, prev.acked)
	f.BytesReceived = sub64(cur.recv, prev.recv)
	f.SegsOut = uint64(cur.segsOut - prev.segsOut) // tcp_info's u32 counts wrap
	f.SegsIn = uint64(cur.segsIn - prev.segsIn)
	f.Retransmits = uint64(cur.retrs - prev.retrs)
	f.BusyUS = sub64(cur.busy, prev.busy)
	f.RwndLimitedUS = sub64(cur.rwnd, prev.rwnd)
	f.SndbufLimitedUS = sub64(cur.sndbuf, prev.sndbuf)
	f.Drops = uint64(cur.drops - prev.drops)
}
