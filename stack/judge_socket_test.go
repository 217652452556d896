package stack

import (
	"strings"
	"testing"
)

// withSockets is a 5-second run of one namespace whose socket counters
// edit sets for each second, the rest healthy.
func withSockets(edit func(c *SocketCounters)) Summary {
	return summaryOf(run(5, func(int) Sample {
		ns := healthyNS(1)
		edit(ns.Sockets)
		return Sample{Namespaces: []Namespace{ns}}
	}))
}

// Each TCP counter of segments dropped at a receiving socket, moving at 3
// % of the segments received (300 a second), binds the run at the socket
// layer and is named with what it means; 5 a second (0.05 %) is listed,
// not bound; none moving is no judgement.
func TestJudgeTCPReceiveDrops(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(c *SocketCounters, v uint64)
		what string
	}{
		{"TCPRcvQDrop", func(c *SocketCounters, v uint64) { c.TCPRcvQDrop = v }, "the receive queue was over the socket's buffer"},
		{"TCPBacklogDrop", func(c *SocketCounters, v uint64) { c.TCPBacklogDrop = v }, "the backlog of a socket its process held was full"},
		{"TCPZeroWindowDrop", func(c *SocketCounters, v uint64) { c.TCPZeroWindowDrop = v }, "data came beyond a zero window"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := withSockets(func(k *SocketCounters) { k.TCPInSegs = 10000; c.set(k, 300) })
			j := s.judgement(LayerSocket, "tcp_receive_drops")
			if j == nil || !j.Bound || j.Outside || s.state(LayerSocket).State != StateBound {
				dump(t, s)
				t.Fatalf("300/s: %+v", j)
			}
			for _, want := range []string{"receiving sockets dropped 2.9 % of the TCP segments", "(1500 of 51500, 300 a second; most by " + c.name + ": " + c.what + ")", "each is sent again"} {
				if !strings.Contains(j.Summary, want) {
					t.Errorf("summary lacks %q: %s", want, j.Summary)
				}
			}
			if j.Subject != "network namespace 1" || len(j.Evidence) != 1 || !strings.Contains(j.Evidence[0], c.name+" 1500 ("+c.what+")") ||
				!strings.Contains(j.Fix, "net.ipv4.tcp_rmem") || j.Share < 0.029 || j.Share > 0.0292 {
				t.Errorf("judgement %+v", j)
			}

			s = withSockets(func(k *SocketCounters) { k.TCPInSegs = 10000; c.set(k, 5) })
			if j := s.judgement(LayerSocket, "tcp_receive_drops"); j == nil || j.Bound || s.state(LayerSocket).State != StateRoom {
				t.Errorf("5/s: %+v %+v", j, s.state(LayerSocket))
			}
		})
	}
	s := withSockets(func(k *SocketCounters) { k.TCPInSegs = 10000 })
	if j := s.judgement(LayerSocket, "tcp_receive_drops"); j != nil || s.state(LayerSocket).State != StateRoom {
		t.Errorf("no drops: %+v %+v", j, s.Layers)
	}
}

// A full accept queue: 40 connection attempts a second dropped against
// 200 accepted binds the run, in connections and their wait; 1 a second
// in 2000 is listed, not bound; none is no judgement.
func TestJudgeListenOverflows(t *testing.T) {
	s := withSockets(func(c *SocketCounters) { c.TCPPassiveOpens, c.ListenOverflows, c.ListenDrops = 200, 40, 40 })
	j := s.judgement(LayerSocket, "listen_overflow")
	if j == nil || !j.Bound || s.state(LayerSocket).State != StateBound {
		dump(t, s)
		t.Fatalf("40/s: %+v", j)
	}
	for _, want := range []string{"listening sockets dropped 17 % of the connection attempts (200 of 1200, 40 a second)",
		"accept queue was full", "a second or more, before it carries data"} {
		if !strings.Contains(j.Summary, want) {
			t.Errorf("summary lacks %q: %s", want, j.Summary)
		}
	}
	if !strings.Contains(j.Fix, "net.core.somaxconn") || !strings.Contains(j.Evidence[0], "ListenOverflows 200, ListenDrops 200; Tcp PassiveOpens 1000 in 5.0 s") {
		t.Errorf("judgement %+v", j)
	}
	s = withSockets(func(c *SocketCounters) { c.TCPPassiveOpens, c.ListenDrops = 2000, 1 })
	if j := s.judgement(LayerSocket, "listen_overflow"); j == nil || j.Bound || s.state(LayerSocket).State != StateRoom {
		t.Errorf("1/s: %+v %+v", j, s.state(LayerSocket))
	}
	s = withSockets(func(c *SocketCounters) { c.TCPPassiveOpens = 2000 })
	if j := s.judgement(LayerSocket, "listen_overflow"); j != nil || s.state(LayerSocket).State != StateRoom {
		t.Errorf("none: %+v", j)
	}
}
