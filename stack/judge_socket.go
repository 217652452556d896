package stack

import (
	"fmt"
	"strings"
)

// Thresholds of the socket layer's judgement.
const (
	// dropShareMin: datagrams or segments dropped at sockets at this share
	// of those offered bound the run.
	dropShareMin = 0.01
	// dropRateMin: and at least this many a second.
	dropRateMin = 10
)

// judgeSockets judges each namespace's socket drops.
func judgeSockets(nss []NamespaceSummary, flows []FlowSummary) ([]Judgement, LayerStatus) {
	st := LayerStatus{Layer: LayerSocket, State: StateUnknown, Note: "no namespace's socket counters were read"}
	var out []Judgement
	for i := range nss {
		n := &nss[i]
		if n.Seconds <= 0 {
			continue
		}
		if st.State == StateUnknown {
			st = LayerStatus{Layer: LayerSocket, State: StateRoom}
		}
		for _, j := range judgeNamespaceSockets(n, flows) {
			if j.Bound {
				st = LayerStatus{Layer: LayerSocket, State: StateBound, Note: j.Summary}
			}
			out = append(out, j)
		}
	}
	return out, st
}

// judgeNamespaceSockets judges one namespace's UDP and TCP drops.
func judgeNamespaceSockets(n *NamespaceSummary, flows []FlowSummary) []Judgement {
	c, secs := &n.Sockets, n.Seconds
	var out []Judgement
	where := nsName(n)
	if offered := c.UDPInDatagrams + c.UDPInErrors; c.UDPRcvbufErrors > 0 && offered > 0 {
		share := float64(c.UDPRcvbufErrors) / float64(offered)
		j := Judgement{Layer: LayerSocket, Kind: "udp_receive_buffer", Subject: where, Share: share,
			Bound: share >= dropShareMin && float64(c.UDPRcvbufErrors)/secs >= dropRateMin}
		sock := dropper(flows, n.ID)
		j.Summary = fmt.Sprintf("the receiving socket%s dropped %s of the datagrams (%s of %s): %s",
			sockAt(sock), shareText(share), countText(c.UDPRcvbufErrors), countText(offered), rcvbufText(sock, n.Buffers))
		j.Fix = udpRcvFix(sock, n.Buffers)
		j.Evidence = []string{fmt.Sprintf("Udp RcvbufErrors %d, InDatagrams %d, InErrors %d in %.1f s", c.UDPRcvbufErrors, c.UDPInDatagrams, c.UDPInErrors, secs)}
		out = append(out, j)
	}
	if c.UDPSndbufErrors > 0 {
		share := float64(c.UDPSndbufErrors) / float64(c.UDPOutDatagrams+c.UDPSndbufErrors)
		out = append(out, Judgement{Layer: LayerSocket, Kind: "udp_send_buffer", Subject: where, Share: share,
			Bound:    share >= dropShareMin && float64(c.UDPSndbufErrors)/secs >= dropRateMin,
			Summary:  fmt.Sprintf("the sending socket's buffer was full for %s of the datagrams (%s): the application got ENOBUFS and sent fewer", shareText(share), countText(c.UDPSndbufErrors)),
			Fix:      "a larger SO_SNDBUF (iperf3 -w) with sysctl -w net.core.wmem_max=" + fmt.Sprint(pow2At(4*float64(wmemOf(n.Buffers)))),
			Evidence: []string{fmt.Sprintf("Udp SndbufErrors %d, OutDatagrams %d", c.UDPSndbufErrors, c.UDPOutDatagrams)}})
	}
	if j, ok := tcpDrops(n); ok {
		out = append(out, j)
	}
	if j, ok := listenDrops(n); ok {
		out = append(out, j)
	}
	return out
}

// listenDrops judges the connections listening sockets dropped (a full
// accept queue, ListenOverflows, is the usual part of ListenDrops) against
// those they accepted (PassiveOpens): a dropped handshake waits for the
// client's retransmission, a second or more, before it carries data.
func listenDrops(n *NamespaceSummary) (Judgement, bool) {
	c := &n.Sockets
	drops := max(c.ListenOverflows, c.ListenDrops)
	if drops == 0 {
		return Judgement{}, false
	}
	attempts := c.TCPPassiveOpens + drops
	share := float64(drops) / float64(attempts)
	return Judgement{Layer: LayerSocket, Kind: "listen_overflow", Subject: nsName(n), Share: share,
		Bound: share >= dropShareMin && float64(drops)/n.Seconds >= dropRateMin,
		Summary: fmt.Sprintf("listening sockets dropped %s of the connection attempts (%s of %s, %.0f a second): their accept queue was full; each waits for the client's retransmission, a second or more, before it carries data",
			shareText(share), countText(drops), countText(attempts), float64(drops)/n.Seconds),
		Fix: "a larger listen backlog in the server (listen(2)'s backlog) with sysctl -w net.core.somaxconn=4096 and net.ipv4.tcp_max_syn_backlog=4096, and a server that accepts faster",
		Evidence: []string{fmt.Sprintf("TcpExt ListenOverflows %d, ListenDrops %d; Tcp PassiveOpens %d in %.1f s",
			c.ListenOverflows, c.ListenDrops, c.TCPPassiveOpens, n.Seconds)}}, true
}

// tcpDrops judges the segments TCP dropped at receiving sockets.
func tcpDrops(n *NamespaceSummary) (Judgement, bool) {
	c := &n.Sockets
	drops := c.TCPRcvQDrop + c.TCPBacklogDrop + c.TCPZeroWindowDrop + c.TCPOFODrop + c.RcvPruned
	if drops == 0 || c.TCPInSegs == 0 {
		return Judgement{}, false
	}
	share := float64(drops) / float64(c.TCPInSegs+drops)
	var parts []string
	var most string
	var mostN uint64
	for _, p := range []struct {
		n    string
		v    uint64
		what string
	}{{"TCPRcvQDrop", c.TCPRcvQDrop, "the receive queue was over the socket's buffer"},
		{"TCPBacklogDrop", c.TCPBacklogDrop, "the backlog of a socket its process held was full"},
		{"TCPZeroWindowDrop", c.TCPZeroWindowDrop, "data came beyond a zero window"},
		{"TCPOFODrop", c.TCPOFODrop, "out-of-order data found no memory"},
		{"RcvPruned", c.RcvPruned, "the receive queue was pruned for memory"}} {
		if p.v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%s)", p.n, p.v, p.what))
		}
		if p.v > mostN {
			most, mostN = p.n+": "+p.what, p.v
		}
	}
	j := Judgement{Layer: LayerSocket, Kind: "tcp_receive_drops", Subject: nsName(n), Share: share,
		Bound: share >= dropShareMin && float64(drops)/n.Seconds >= dropRateMin,
		Summary: fmt.Sprintf("receiving sockets dropped %s of the TCP segments (%s of %s, %.0f a second; most by %s): each is sent again, and the sender's window shrinks",
			shareText(share), countText(drops), countText(c.TCPInSegs+drops), float64(drops)/n.Seconds, most),
		Fix:      "a receive buffer that holds a round trip (sysctl -w net.ipv4.tcp_rmem, SO_RCVBUF) and a receiving application that keeps up",
		Evidence: []string{strings.Join(parts, "; ")}}
	return j, true
}

// nsName names a namespace in a sentence.
func nsName(n *NamespaceSummary) string {
	switch {
	case n.Path != "" && !strings.HasPrefix(n.Path, "/proc/"):
		return "network namespace " + n.Path
	case n.ID != 0:
		return fmt.Sprintf("network namespace %d", n.ID)
	}
	return "this host's network namespace"
}

// dropper returns the UDP flow of namespace ns that dropped the most.
func dropper(flows []FlowSummary, ns uint64) *FlowSummary {
	var best *FlowSummary
	for i := range flows {
		f := &flows[i]
		if f.Netns == ns && f.Proto == "udp" && f.Drops > 0 && (best == nil || f.Drops > best.Drops) {
			best = f
		}
	}
	return best
}

// sockAt names the socket that dropped: " (10.0.0.2:5201, iperf3)".
func sockAt(f *FlowSummary) string {
	if f == nil {
		return ""
	}
	if f.Comm != "" {
		return " (" + f.Local + ", " + f.Comm + ")"
	}
	return " (" + f.Local + ")"
}

// rcvbufText says how large the dropping socket's buffer was.
func rcvbufText(f *FlowSummary, b *Buffers) string {
	if f != nil && f.RcvbufMax > 0 {
		return "its " + bytesText(float64(f.RcvbufMax)) + " buffer"
	}
	if b != nil && b.RmemDefault > 0 {
		return "a buffer of net.core.rmem_default, " + bytesText(float64(b.RmemDefault)) + ", unless the application set one"
	}
	return "its buffer"
}

// udpRcvFix is the fix for a UDP socket whose buffer overflows.
func udpRcvFix(f *FlowSummary, b *Buffers) string {
	cur := float64(208 << 10)
	if f != nil && f.RcvbufMax > 0 {
		cur = float64(f.RcvbufMax)
	} else if b != nil && b.RmemDefault > 0 {
		cur = float64(b.RmemDefault)
	}
	to := pow2At(max(16*cur, 4<<20))
	return fmt.Sprintf("a larger SO_RCVBUF in the receiver (iperf3 -w %dM) with sysctl -w net.core.rmem_max=%d so the kernel grants it (or net.core.rmem_default for applications that set none)", max(to>>20, 1), to)
}

// wmemOf returns net.core.wmem_max, or 208 KiB unread.
func wmemOf(b *Buffers) int64 {
	if b != nil && b.WmemMax > 0 {
		return b.WmemMax
	}
	return 208 << 10
}
