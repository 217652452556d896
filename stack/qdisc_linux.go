package stack

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// qkey names a qdisc or class of a namespace.
type qkey struct {
	ifindex        int
	handle, parent string
	class          bool
}

// qPrev is a qdisc's cumulative counts at the previous reading. The
// kernel's gnet_stats_basic packets and gnet_stats_queue counts are 32-bit
// (they wrap); bytes are 64.
type qPrev struct {
	bytes                                uint64
	packets, drops, overlimits, requeues uint32
	gen                                  uint32
}

// readQdiscs reads the qdiscs and classes of the interfaces ifs of n.
func (s *Sampler) readQdiscs(n *nsState, ifs map[int]bool, x *Sample) {
	l := n.live
	idxs := make([]int, 0, len(ifs))
	for i := range ifs {
		idxs = append(idxs, i)
	}
	slices.Sort(idxs)
	for _, idx := range idxs {
		link := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: idx}}
		name := l.linkName(idx)
		qs, err := l.nlh.QdiscList(link)
		if err != nil {
			n.missing(x, fmt.Sprintf("qdiscs of %s (index %d)", name, idx), err)
			l.forget(idx)
			continue
		}
		var cakes bool
		first := len(x.Qdiscs) // this interface's qdiscs follow
		for _, q := range qs {
			e := qdiscOf(q)
			cakes = cakes || e.Kind == "cake"
			s.addQdisc(n, idx, name, e, q.Attrs().Statistics, x)
		}
		if cakes {
			l.cakeRates(idx, x.Qdiscs[first:], n, x)
		}
		cs, err := l.nlh.ClassList(link, 0)
		if err != nil {
			n.missing(x, "classes of "+name, err)
			continue
		}
		for _, c := range cs {
			e := classOf(c)
			s.addQdisc(n, idx, name, e, (*netlink.QdiscStatistics)(c.Attrs().Statistics), x)
		}
	}
	for k, p := range l.qd {
		if p.gen != s.gen {
			delete(l.qd, k)
		}
	}
}

// forget drops what is cached of the interface index.
func (l *liveNS) forget(idx int) {
	delete(l.links, idx)
	for name, i := range l.ifidx {
		if i == idx {
			delete(l.ifidx, name)
		}
	}
}

// qdiscOf returns a qdisc's identity and configured rate.
func qdiscOf(q netlink.Qdisc) Qdisc {
	a := q.Attrs()
	e := Qdisc{Kind: q.Type(), Handle: handleName(a.Handle, false), Parent: parentName(a.Parent)}
	switch v := q.(type) {
	case *netlink.Tbf:
		e.Rate = v.Rate
	case *netlink.Fq:
		if v.FlowMaxRate != 0 && v.FlowMaxRate != ^uint32(0) { // ~0U: unlimited
			e.Rate = uint64(v.FlowMaxRate)
		}
	}
	return e
}

// classOf returns a class's identity and configured rate and ceil.
func classOf(c netlink.Class) Qdisc {
	a := c.Attrs()
	e := Qdisc{Kind: c.Type(), Handle: handleName(a.Handle, true), Parent: parentName(a.Parent), Class: true}
	if h, ok := c.(*netlink.HtbClass); ok {
		e.Rate, e.Ceil = h.Rate, h.Ceil
	}
	return e
}

// addQdisc counts e's interval from st against the previous reading and
// adds it to x.
func (s *Sampler) addQdisc(n *nsState, idx int, name string, e Qdisc, st *netlink.QdiscStatistics, x *Sample) {
	l := n.live
	e.Netns, e.Iface = n.id, name
	var cur qPrev
	if st != nil && st.Basic != nil {
		cur.bytes, cur.packets = st.Basic.Bytes, st.Basic.Packets
	}
	if st != nil && st.Queue != nil {
		q := st.Queue
		cur.drops, cur.overlimits, cur.requeues = q.Drops, q.Overlimits, q.Requeues
		e.Backlog, e.Qlen = q.Backlog, q.Qlen
	}
	cur.gen = s.gen
	k := qkey{ifindex: idx, handle: e.Handle, parent: e.Parent, class: e.Class}
	p, had := l.qd[k]
	l.qd[k] = cur
	if had {
		e.Bytes = sub64(cur.bytes, p.bytes)
		e.Packets = uint64(cur.packets - p.packets)
		e.Drops = uint64(cur.drops - p.drops)
		e.Overlimits = uint64(cur.overlimits - p.overlimits)
		e.Requeues = uint64(cur.requeues - p.requeues)
	} else {
		e.First = true
	}
	x.Qdiscs = append(x.Qdiscs, e)
}

// cakeRates sets the Rate of the cake qdiscs of interface idx among qs
// from the qdisc dump's options: the library keeps no cake options.
func (l *liveNS) cakeRates(idx int, qs []Qdisc, n *nsState, x *Sample) {
	if l.rt == nil {
		c, err := dialIn(l.h, unix.NETLINK_ROUTE)
		if err != nil {
			n.missing(x, "cake options", err)
			return
		}
		l.rt = c
	}
	var tcm [tcmsgLen]byte // struct tcmsg: family, pad, ifindex, handle, parent, info
	binary.NativeEndian.PutUint32(tcm[4:], uint32(idx))
	l.rtMsg.Start(unix.RTM_GETQDISC, unix.NLM_F_DUMP, tcm[:])
	err := l.rt.Do(&l.rtMsg, true, func(typ uint16, m []byte) error {
		if typ != unix.RTM_NEWQDISC || len(m) < tcmsgLen || int(int32(binary.NativeEndian.Uint32(m[4:]))) != idx {
			return nil
		}
		rate, ok, _ := cakeRate(m[tcmsgLen:])
		if !ok {
			return nil
		}
		h := handleName(binary.NativeEndian.Uint32(m[8:]), false)
		for i := range qs {
			if qs[i].Kind == "cake" && qs[i].Handle == h {
				qs[i].Rate = rate
			}
		}
		return nil
	})
	if err != nil {
		n.missing(x, "cake options", err)
	}
}

// tcmsgLen is struct tcmsg's size.
const tcmsgLen = 20
