package stack

import (
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/nicdiag/nicdiag/internal/genl"
	"github.com/nicdiag/nicdiag/internal/nsthread"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// liveNS is a namespace's netlink side on the live host.
type liveNS struct {
	h       netns.NsHandle // netns.None() for the caller's namespace
	diag    *diagConn      // nil where diagErr says why
	diagErr error
	nlh     *netlink.Handle
	rt      *genl.Conn // RTM_GETQDISC for cake's options, opened when needed
	rtMsg   genl.Msg
	dumped  bool // a sock_diag dump was taken at an earlier reading
	flows   map[uint64]flowPrev
	others  map[uint64]uint32 // cookies of sockets not the run's, by reading
	qd      map[qkey]qPrev
	routes  map[netip.Addr]int // a peer's interface index (0: none)
	links   map[int]string     // interface names by index
	ifidx   map[string]int     // WithInterfaces's indexes by name
}

// openNS opens the namespace of t: its file and netlink sockets on the
// live host, nothing under a root.
func (s *Sampler) openNS(t target) (*nsState, error) {
	n := &nsState{id: t.id, path: t.path}
	if !s.o.root.Live() {
		return n, nil
	}
	l := &liveNS{h: netns.None(), flows: map[uint64]flowPrev{}, others: map[uint64]uint32{}, qd: map[qkey]qPrev{},
		routes: map[netip.Addr]int{}, links: map[int]string{}, ifidx: map[string]int{}}
	if t.path != "" {
		h, err := netns.GetFromPath(t.path)
		if err != nil {
			return nil, fmt.Errorf("stack: network namespace %s: %w", t.path, err)
		}
		l.h = h
	}
	// Route netlink only: a kernel without XFRM or nfnetlink (the library's
	// other default families) still answers links, routes and qdiscs.
	var err error
	if l.nlh, err = netlink.NewHandleAt(l.h, unix.NETLINK_ROUTE); err != nil {
		l.close()
		return nil, fmt.Errorf("stack: network namespace %s: %w", n.name(), err)
	}
	// A kernel without sock_diag (inet_diag not built or not loaded) has
	// no flows to read; its files and qdiscs are read all the same.
	l.diag, l.diagErr = openDiag(l.h)
	n.live = l
	return n, nil
}

// close releases the sockets and the namespace.
func (l *liveNS) close() {
	if l == nil {
		return
	}
	l.diag.close()
	if l.nlh != nil {
		l.nlh.Close()
		l.nlh = nil
	}
	if l.rt != nil {
		l.rt.Close()
		l.rt = nil
	}
	if l.h.IsOpen() {
		l.h.Close()
	}
}

// openFiles opens n's files: through the root for the caller's namespace
// (and under a root), else on a thread inside the namespace.
func (s *Sampler) openFiles(n *nsState) {
	if n.live == nil || !n.live.h.IsOpen() {
		for i, p := range nsFilePaths {
			n.files.f[i], n.files.err[i] = s.o.root.Open(p)
		}
		return
	}
	err := nsthread.Run(n.live.h, func() error {
		for i, p := range nsFilePaths {
			n.files.f[i], n.files.err[i] = os.Open(threadPath(p))
		}
		return nil
	})
	if err != nil {
		for i := range n.files.err {
			n.files.err[i] = fmt.Errorf("network namespace %s: %w", n.path, err)
		}
	}
}

// threadPath names a /proc/net file as the calling thread sees it (its
// namespace, not the process's).
func threadPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "/proc/net/"); ok {
		return "/proc/thread-self/net/" + rest
	}
	return p
}

// readLive reads n's flows, their routes, and the qdiscs of the
// interfaces watched in n.
func (s *Sampler) readLive(n *nsState, x *Sample) {
	ifs := s.readFlows(n, x)
	if n.main {
		for _, name := range s.o.ifaces {
			idx, err := n.live.index(name)
			if err != nil {
				n.missing(x, "interface "+name, err)
				continue
			}
			ifs[idx] = true
		}
	}
	s.readQdiscs(n, ifs, x)
}

// index returns the index of the interface name, cached.
func (l *liveNS) index(name string) (int, error) {
	if i, ok := l.ifidx[name]; ok {
		return i, nil
	}
	link, err := l.nlh.LinkByName(name)
	if err != nil {
		return 0, err
	}
	i := link.Attrs().Index
	l.ifidx[name], l.links[i] = i, name
	return i, nil
}

// linkName returns the name of the interface index, cached.
func (l *liveNS) linkName(idx int) string {
	if name, ok := l.links[idx]; ok {
		return name
	}
	name := ""
	if link, err := l.nlh.LinkByIndex(idx); err == nil {
		name = link.Attrs().Name
	}
	l.links[idx] = name
	return name
}
