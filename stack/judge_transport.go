package stack

import (
	"fmt"
	"strings"
)

// Thresholds of the transport's judgement.
const (
	// minFlowBytes: a flow that moved less (a control connection, a
	// handshake) is not judged.
	minFlowBytes = 1 << 20
	// busyMin: a sender busy for less of its span was held by its
	// application, not by the stack.
	busyMin = 0.5
	// limitedMin: a window or buffer held the flow when it stalled the
	// sender for at least this share of its busy time.
	limitedMin = 0.5
	// lossMin: retransmitted bytes at this share of those sent are loss
	// on the path.
	lossMin = 0.01
	// windowFullMin: a receiver's window is full when the rate × RTT
	// reaches this share of it.
	windowFullMin = 0.7
	// stallSomeMin: a sender stalled on the window at least this share of
	// its busy time, with the window full (windowFullMin), was held by it:
	// on a path of tens of microseconds the window reopens within the
	// kernel's timer granularity, so tcpi_rwnd_limited reads low there.
	stallSomeMin = 0.1
	// queueFullMin: a receiver whose queue was over half its buffer in
	// this share of the readings was behind: its application, not the
	// buffer's size, closed the window.
	queueFullMin = 0.5
)

// judgeTransport judges each TCP flow that moved data.
func judgeTransport(flows []FlowSummary, ns map[uint64]NamespaceSummary, missing []string) ([]Judgement, LayerStatus) {
	st := LayerStatus{Layer: LayerTransport, State: StateNotApplicable, Note: "no TCP flow of the run moved 1 MiB"}
	var out []Judgement
	// A receiving flow whose sender is a flow of this host too is judged
	// by the sender's limit timers, which say whether the window held it.
	judged := map[string]bool{}
	for i := range flows {
		f := &flows[i]
		if f.Proto == "tcp" && f.Timers && f.BytesSent >= minFlowBytes {
			for j := range flows {
				if r := &flows[j]; r.Local == f.Peer && r.Peer == f.Local && r.Proto == "tcp" {
					judged[flowName(r)] = true
				}
			}
		}
	}
	for _, senders := range []bool{true, false} {
		for i := range flows {
			f := &flows[i]
			if f.Proto != "tcp" || f.BytesSent+f.BytesReceived < minFlowBytes || (f.BytesSent >= f.BytesReceived) != senders {
				continue
			}
			if st.State == StateNotApplicable {
				st = LayerStatus{Layer: LayerTransport, State: StateRoom}
			}
			var j *Judgement
			switch {
			case senders:
				j = judgeSender(f, flows, ns)
			case !judged[flowName(f)]:
				j = judgeReceiver(f, ns)
			}
			if j == nil {
				continue
			}
			judged[j.Subject] = true
			if j.Bound && !j.Outside {
				st = LayerStatus{Layer: LayerTransport, State: StateBound, Note: j.Summary}
			}
			out = append(out, *j)
		}
	}
	if st.State == StateNotApplicable {
		if m := firstWith(missing, "sock_diag"); m != "" {
			st = LayerStatus{Layer: LayerTransport, State: StateUnknown, Note: m}
		}
	}
	return out, st
}

// flowName names a flow in a sentence: "10.0.0.1:40000 → 10.0.0.2:5201
// (iperf3)".
func flowName(f *FlowSummary) string {
	s := f.Local + " → " + f.Peer
	if f.Comm != "" {
		s += " (" + f.Comm + ")"
	}
	return s
}

// windowMbps is the rate a window of w bytes allows over an RTT of rttMs.
func windowMbps(w float64, rttMs float64) float64 {
	if rttMs <= 0 {
		return 0
	}
	return w * 8 / (rttMs / 1000) / 1e6
}

// inFlight is the bytes a flow at mbps keeps in flight over an RTT of
// rttMs (the rate × RTT; the inverse of windowMbps).
func inFlight(mbps, rttMs float64) float64 { return mbps * 1e6 / 8 * rttMs / 1000 }

// judgeSender judges a flow that mostly sent, from the kernel's limit
// timers and its retransmits.
func judgeSender(f *FlowSummary, all []FlowSummary, ns map[uint64]NamespaceSummary) *Judgement {
	j := &Judgement{Layer: LayerTransport, Subject: flowName(f), AchievedMbps: f.SendMbps}
	ev := []string{fmt.Sprintf("sent %s over %.1f s", mbpsText(f.SendMbps), f.Seconds),
		fmt.Sprintf("busy %s of the time", shareText(f.BusyShare)), "RTT " + msText(f.RTTMs)}
	busy := f.Timers && f.BusyShare >= busyMin
	switch {
	case busy && (f.RwndLimitedShare >= limitedMin || peerWindowFull(f)):
		return senderWindow(f, j, ev, all, ns)
	case busy && f.SndbufLimitedShare >= limitedMin:
		j.Kind, j.Bound, j.Share = "send_buffer", true, f.SndbufLimitedShare
		need := inFlight(f.SendMbps, f.RTTMs)
		j.Summary = fmt.Sprintf("the flow %s waited on its own send buffer %s of the time it had data to send: its %s buffer holds about %s of the %s the rate × RTT keeps in flight",
			j.Subject, shareText(f.SndbufLimitedShare), bytesText(float64(f.SndbufMax)), bytesText(float64(f.SndbufMax)/2), bytesText(need))
		wmem := int64(0)
		if b := ns[f.Netns].Buffers; b != nil {
			wmem = b.TCPWmem[2]
			ev = append(ev, fmt.Sprintf("net.ipv4.tcp_wmem max %s, net.core.wmem_max %s", bytesText(float64(b.TCPWmem[2])), bytesText(float64(b.WmemMax))))
		}
		to := pow2At(4 * float64(max(int64(f.SndbufMax), wmem)))
		j.Fix = fmt.Sprintf("sysctl -w net.ipv4.tcp_wmem='4096 16384 %d' (and no SO_SNDBUF in the application, which stops autotuning; iperf3 -w sets it)", to)
		ev = append(ev, "send buffer "+bytesText(float64(f.SndbufMax)))
	case f.RetransShare >= lossMin:
		j.Kind, j.Outside, j.Share = "path_loss", true, f.RetransShare
		j.Bound = busy || !f.Timers
		j.Summary = fmt.Sprintf("the flow %s retransmitted %s of what it sent: loss on the path (or a drop counted in this host's socket or qdisc layer) cut its congestion window", j.Subject, shareText(f.RetransShare))
		j.Fix = "find where packets are lost: this host's qdisc and socket drops, the NIC's, then the path and the peer (ethtool -S, tc -s qdisc, nstat on both ends)"
		ev = append(ev, fmt.Sprintf("%s retransmitted", bytesText(float64(f.BytesRetrans))))
	case f.Timers && f.BusyShare < busyMin:
		j.Kind, j.Share = "app_limited", 1-f.BusyShare
		j.Summary = fmt.Sprintf("the flow %s had nothing to send %s of the time: the application (or its rate setting) set its pace, not the stack", j.Subject, shareText(1-f.BusyShare))
	default:
		j.Kind, j.Outside, j.Share = "congestion", true, f.BusyShare
		j.Summary = fmt.Sprintf("the flow %s was held by neither window nor send buffer and lost little: its congestion control paced it to what the path took, or a pacing rate the application set (SO_MAX_PACING_RATE, iperf3 --fq-rate)", j.Subject)
	}
	j.Evidence = ev
	return j
}

// peerWindowFull reports whether the sender stalled on the peer's window
// sometimes and kept it full: its bytes in flight, the rate × smoothed RTT
// (Little's law), at least windowFullMin of the largest window the peer
// gave.
func peerWindowFull(f *FlowSummary) bool {
	return f.RwndLimitedShare >= stallSomeMin && f.SndWndMax > 0 && inFlight(f.SendMbps, f.RTTMs) >= windowFullMin*float64(f.SndWndMax)
}

// senderWindow judges a sender stalled by its peer's receive window: the
// peer's, or this host's when the receiving socket is one of the flows.
func senderWindow(f *FlowSummary, j *Judgement, ev []string, all []FlowSummary, ns map[uint64]NamespaceSummary) *Judgement {
	j.Kind, j.Bound, j.Share = "peer_window", true, f.RwndLimitedShare
	// The smoothed RTT counts queueing the window did not wait on: where
	// the window over it allows less than the flow moved, the flow's own
	// rate is the most the window is known to allow.
	j.CeilingMbps = max(windowMbps(float64(f.SndWndMax), f.RTTMs), f.SendMbps)
	if f.SndWndMax > 0 {
		ev = append(ev, "peer's window up to "+bytesText(float64(f.SndWndMax)))
	}
	j.Evidence = ev
	for i := range all {
		r := &all[i]
		if r.Local == f.Peer && r.Peer == f.Local && r.Proto == "tcp" {
			if r.RecvQueueFullShare >= queueFullMin && !atCap(r, ns[r.Netns].Buffers) {
				return receiverBehind(r, j, f.RwndLimitedShare)
			}
			j.Kind = "local_window"
			j.Subject = flowName(r)
			b := ns[r.Netns].Buffers
			j.Summary = fmt.Sprintf("the flow %s waited on the receive window %s of the time it had data to send: the receiving socket %s is on this host (network namespace %d); %s",
				flowName(f), shareText(f.RwndLimitedShare), r.Local, r.Netns, bufferCap(r, b))
			if need := inFlight(f.SendMbps, f.RTTMs); need > 0 {
				j.Summary += fmt.Sprintf("; at %s over a %s round trip the flow kept %s in flight, all the window gave it: each doubling of the window doubles the rate while the path has room",
					mbpsText(f.SendMbps), msText(f.RTTMs), bytesText(need))
			}
			j.Evidence = append(j.Evidence, "receive buffer "+bytesText(float64(r.RcvbufMax)))
			if b != nil {
				j.Evidence = append(j.Evidence, fmt.Sprintf("net.ipv4.tcp_rmem max %s, net.core.rmem_max %s", bytesText(float64(b.TCPRmem[2])), bytesText(float64(b.RmemMax))))
			}
			j.Fix = rmemFix(r, b)
			return j
		}
	}
	j.Outside = true
	j.Summary = fmt.Sprintf("the flow %s waited on the peer's receive window %s of the time it had data to send", j.Subject, shareText(f.RwndLimitedShare))
	if f.SndWndMax > 0 {
		j.Summary += fmt.Sprintf(", a window of up to %s", bytesText(float64(f.SndWndMax)))
		if w := windowMbps(float64(f.SndWndMax), f.RTTMs); w >= f.SendMbps {
			j.Summary += fmt.Sprintf(": over %s it allows %s", msText(f.RTTMs), mbpsText(w))
		}
	}
	j.Fix = "raise the receive buffer on the peer (net.ipv4.tcp_rmem max there, or its SO_RCVBUF: iperf3 -w on the server)"
	return j
}

// judgeReceiver judges a flow that mostly received: this host's window
// is full when the rate × RTT fills what the socket may advertise and
// its buffer cannot grow.
func judgeReceiver(f *FlowSummary, ns map[uint64]NamespaceSummary) *Judgement {
	if f.RecvQueueFullShare >= queueFullMin && !atCap(f, ns[f.Netns].Buffers) {
		j := &Judgement{Layer: LayerTransport, Subject: flowName(f), AchievedMbps: f.RecvMbps}
		return receiverBehind(f, j, 0)
	}
	// The path's own round trip, its least: the receiver's estimate
	// (tcpi_rcv_rtt) also counts the time data waited in a queue the
	// application was slow to read, and a window that only held what the
	// application left unread did not limit the flow.
	rtt := f.MinRTTMs
	if rtt <= 0 {
		rtt = f.RcvRTTMs
	}
	if rtt <= 0 {
		rtt = f.RTTMs
	}
	win := float64(f.RcvWndMax)
	if win <= 0 {
		win = float64(f.RcvbufMax) / 2 // about what the kernel advertises of its buffer
	}
	need := inFlight(f.RecvMbps, rtt)
	if win <= 0 || rtt <= 0 || need < windowFullMin*win {
		return nil
	}
	b := ns[f.Netns].Buffers
	j := &Judgement{Layer: LayerTransport, Kind: "local_window", Subject: flowName(f), Bound: true,
		AchievedMbps: f.RecvMbps, CeilingMbps: windowMbps(win, rtt), Share: min(1, need/win)}
	j.Summary = fmt.Sprintf("the flow %s received %s over a %s round trip, %s in flight, %s of the %s window this host advertised: %s",
		j.Subject, mbpsText(f.RecvMbps), msText(rtt), bytesText(need), shareText(j.Share), bytesText(win), bufferCap(f, b))
	j.Fix = rmemFix(f, b)
	j.Evidence = []string{"receive buffer " + bytesText(float64(f.RcvbufMax)), "RTT " + msText(rtt)}
	if f.Drops > 0 {
		j.Evidence = append(j.Evidence, fmt.Sprintf("the socket dropped %d packets", f.Drops))
	}
	return j
}

// receiverBehind judges a receiving socket of this host whose queue was
// full: the application did not read fast enough, so the window it
// advertised closed. That is the application's limit (its CPU, its
// reads), not the stack's: not bound here.
func receiverBehind(r *FlowSummary, j *Judgement, stalled float64) *Judgement {
	j.Kind, j.Bound, j.Outside, j.Share = "receiver_behind", false, false, r.RecvQueueFullShare
	j.Subject = flowName(r)
	j.Summary = fmt.Sprintf("the receiving socket %s on this host was behind: its queue was over half its %s buffer in %s of the readings, so the window it advertised closed",
		r.Local, bytesText(float64(r.RcvbufMax)), shareText(r.RecvQueueFullShare))
	if stalled > 0 {
		j.Summary += fmt.Sprintf(" (the sender waited on it %s of its busy time)", shareText(stalled))
	}
	j.Fix = "the receiving application must read faster: its CPU (taskset, fewer competing processes) or larger reads"
	return j
}

// atSysctl and atCoreMax report whether a receiving socket's buffer
// reached net.ipv4.tcp_rmem's max (autotuning wanted more) or twice
// net.core.rmem_max (an SO_RCVBUF the kernel capped).
func atSysctl(f *FlowSummary, b *Buffers) bool {
	return b != nil && b.TCPRmem[2] > 0 && float64(f.RcvbufMax) >= 0.9*float64(b.TCPRmem[2])
}

func atCoreMax(f *FlowSummary, b *Buffers) bool {
	return b != nil && b.RmemMax > 0 && float64(f.RcvbufMax) >= 1.8*float64(b.RmemMax)
}

// atCap reports whether the buffer could not grow: then it is the limit
// even where the application also lagged (autotuning grows the buffer
// only as fast as the application reads).
func atCap(f *FlowSummary, b *Buffers) bool { return atSysctl(f, b) || atCoreMax(f, b) }

// bufferCap says what capped a receiving socket's buffer.
func bufferCap(f *FlowSummary, b *Buffers) string {
	switch {
	case atSysctl(f, b):
		return "its buffer reached net.ipv4.tcp_rmem's max, " + bytesText(float64(b.TCPRmem[2]))
	case atCoreMax(f, b):
		return "its buffer was set by the application (SO_RCVBUF) and capped by net.core.rmem_max, " + bytesText(float64(b.RmemMax))
	}
	return "its " + bytesText(float64(f.RcvbufMax)) + " buffer did not grow: the application set it (SO_RCVBUF, iperf3 -w)"
}

// rmemFix is the fix for a receive buffer too small for the path.
func rmemFix(f *FlowSummary, b *Buffers) string {
	cur := float64(f.RcvbufMax)
	if b != nil {
		cur = max(cur, float64(b.TCPRmem[2]))
	}
	to := pow2At(4 * cur)
	fix := fmt.Sprintf("sysctl -w net.ipv4.tcp_rmem='4096 131072 %d' (in the receiver's network namespace)", to)
	if b != nil && b.RmemMax > 0 && float64(f.RcvbufMax) < 0.9*float64(b.TCPRmem[2]) {
		fix += fmt.Sprintf("; or a larger SO_RCVBUF (iperf3 -w) with sysctl -w net.core.rmem_max=%d", to)
	}
	return fix
}

// firstWith returns the first line of ls containing sub.
func firstWith(ls []string, sub string) string {
	for _, l := range ls {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
