package irq

import (
	"errors"
	"net"
	"os"
	"slices"
	"testing"

	"github.com/nicdiag/nicdiag/internal/genl"
	"github.com/nicdiag/nicdiag/internal/netnstest"
	"golang.org/x/sys/unix"
)

// TestEthtoolPauseConstants checks the hand-written constants against
// golang.org/x/sys/unix, generated from the kernel's uapi headers.
func TestEthtoolPauseConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, sys int
	}{
		{"ETHTOOL_GENL_VERSION", ethtoolFamilyVersion, unix.ETHTOOL_GENL_VERSION},
		{"ETHTOOL_MSG_PAUSE_GET", ethtoolMsgPauseGet, unix.ETHTOOL_MSG_PAUSE_GET},
		{"ETHTOOL_MSG_PAUSE_GET_REPLY", ethtoolMsgPauseGetReply, unix.ETHTOOL_MSG_PAUSE_GET_REPLY},
		{"ETHTOOL_A_HEADER_DEV_INDEX", ethtoolAHeaderDevIndex, unix.ETHTOOL_A_HEADER_DEV_INDEX},
		{"ETHTOOL_A_HEADER_FLAGS", ethtoolAHeaderFlags, unix.ETHTOOL_A_HEADER_FLAGS},
		{"ETHTOOL_FLAG_STATS", ethtoolFlagStats, unix.ETHTOOL_FLAG_STATS},
		{"ETHTOOL_A_PAUSE_HEADER", ethtoolAPauseHeader, unix.ETHTOOL_A_PAUSE_HEADER},
		{"ETHTOOL_A_PAUSE_STATS", ethtoolAPauseStats, unix.ETHTOOL_A_PAUSE_STATS},
		{"ETHTOOL_A_PAUSE_STAT_PAD", ethtoolAPauseStatPad, unix.ETHTOOL_A_PAUSE_STAT_PAD},
		{"ETHTOOL_A_PAUSE_STAT_TX_FRAMES", ethtoolAPauseStatTxFrames, unix.ETHTOOL_A_PAUSE_STAT_TX_FRAMES},
		{"ETHTOOL_A_PAUSE_STAT_RX_FRAMES", ethtoolAPauseStatRxFrames, unix.ETHTOOL_A_PAUSE_STAT_RX_FRAMES},
	} {
		if c.ours != c.sys {
			t.Errorf("%s = %d, x/sys/unix has %d", c.name, c.ours, c.sys)
		}
	}
	if ethtoolFamilyName != unix.ETHTOOL_GENL_NAME {
		t.Errorf("family %q, x/sys/unix has %q", ethtoolFamilyName, unix.ETHTOOL_GENL_NAME)
	}
}

// ethtoolRaw sends an ethtool netlink get of command cmd for ifindex with
// header flags in the caller's namespace, built as the sampler builds its
// requests, and returns the replies.
func ethtoolRaw(t *testing.T, cmd uint8, hdrAttr uint16, ifindex, flags uint32) ([][]byte, error) {
	t.Helper()
	conn, err := genl.Dial(unix.NETLINK_GENERIC)
	if err != nil {
		t.Skipf("no generic netlink: %v", err)
	}
	defer conn.Close()
	fam, err := conn.FamilyID(ethtoolFamilyName)
	if err != nil {
		t.Skipf("no ethtool netlink: %v", err)
	}
	var m genl.Msg
	m.Genl(fam, unix.NLM_F_ACK, cmd, ethtoolFamilyVersion)
	at := m.Nest(hdrAttr)
	m.U32(ethtoolAHeaderDevIndex, ifindex)
	if flags != 0 {
		m.U32(ethtoolAHeaderFlags, flags)
	}
	m.End(at)
	var out [][]byte
	err = conn.Do(&m, true, func(typ uint16, p []byte) error {
		if typ == fam {
			out = append(out, slices.Clone(p))
		}
		return nil
	})
	return out, err
}

func ifindex(t *testing.T, name string) uint32 {
	t.Helper()
	i, err := net.InterfaceByName(name)
	if err != nil {
		t.Skipf("no %s: %v", name, err)
	}
	return uint32(i.Index)
}

// TestKernelPauseStatsRequest shows the kernel takes the request as
// written: an unknown ifindex is ENODEV and a flag the pause policy
// refuses EINVAL, while lo and eth0 (virtio_net), whose drivers have no
// get_pauseparam, answer PAUSE_GET with EOPNOTSUPP, with or without
// ETHTOOL_FLAG_STATS; the source turns that into no counters, no error.
func TestKernelPauseStatsRequest(t *testing.T) {
	lo := ifindex(t, "lo")
	if _, err := ethtoolRaw(t, ethtoolMsgPauseGet, ethtoolAPauseHeader, 1<<30, ethtoolFlagStats); !errors.Is(err, unix.ENODEV) {
		t.Errorf("unknown ifindex: %v, want ENODEV", err)
	}
	if _, err := ethtoolRaw(t, ethtoolMsgPauseGet, ethtoolAPauseHeader, lo, 1<<7); !errors.Is(err, unix.EINVAL) {
		t.Errorf("unknown flag: %v, want EINVAL", err)
	}
	for _, name := range []string{"lo", "eth0"} {
		if _, err := os.Stat("/sys/class/net/" + name); err != nil {
			continue
		}
		idx := ifindex(t, name)
		for _, flags := range []uint32{0, ethtoolFlagStats} {
			msgs, err := ethtoolRaw(t, ethtoolMsgPauseGet, ethtoolAPauseHeader, idx, flags)
			t.Logf("%s PAUSE_GET flags %d: %d replies, %v", name, flags, len(msgs), err)
			if !errors.Is(err, unix.EOPNOTSUPP) {
				t.Errorf("%s PAUSE_GET flags %d: %d replies, %v; want EOPNOTSUPP", name, flags, len(msgs), err)
			}
		}
		src := &ethtoolPauseStats{conn: testConn(t, "")}
		l, err := src.losses(name)
		if err != nil || len(l) != 0 {
			t.Errorf("%s: %v, %v; want no counters, no error", name, l, err)
		}
		// Without counters it is not asked again.
		if !src.none[name] {
			t.Errorf("%s answered without counters but is not remembered: %v", name, src.none)
		}
	}
}

// TestKernelEthtoolRequestEth0 sends the same request header to a get
// virtio_net answers, CHANNELS_GET: one reply, then the ack.
func TestKernelEthtoolRequestEth0(t *testing.T) {
	const channelsGet, channelsGetReply, channelsHeader = 17, 18, 1 // ETHTOOL_MSG_CHANNELS_GET(_REPLY), ETHTOOL_A_CHANNELS_HEADER
	if channelsGet != unix.ETHTOOL_MSG_CHANNELS_GET || channelsGetReply != unix.ETHTOOL_MSG_CHANNELS_GET_REPLY || channelsHeader != unix.ETHTOOL_A_CHANNELS_HEADER {
		t.Fatal("CHANNELS_GET constants")
	}
	msgs, err := ethtoolRaw(t, channelsGet, channelsHeader, ifindex(t, "eth0"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || len(msgs[0]) < genlHdrLen || msgs[0][0] != channelsGetReply {
		t.Fatalf("CHANNELS_GET: %d replies %x", len(msgs), msgs)
	}
}

// TestKernelPauseStatsNetns reads a veth made in a throwaway namespace
// through a source bound to it: the link resolves there (veth has no pause
// statistics: no counters, no error), and not in the caller's.
func TestKernelPauseStatsNetns(t *testing.T) {
	ns, _ := vethInNS(t, "ndps0", "ndps1")
	s := &ethtoolPauseStats{conn: testConn(t, netnstest.Path(ns))}
	p, err := s.counts("ndps0")
	if err != nil || p != (pauseCounts{}) {
		t.Errorf("veth in its namespace: %+v, %v; want none, no error", p, err)
	}
	if l, err := s.losses("ndps0"); err != nil || l != nil {
		t.Errorf("veth losses: %v, %v", l, err)
	}
	if _, err := (&ethtoolPauseStats{conn: testConn(t, "")}).losses("ndps0"); err == nil {
		t.Error("veth from the caller's namespace: no error, want not found")
	}
}

// TestPauseStatsLiveDefault checks the live default reads pause statistics
// in the namespace of WithNetns.
func TestPauseStatsLiveDefault(t *testing.T) {
	o := newOptions([]Option{WithNetns("/run/netns/x")})
	if p, ok := o.pauseStats.(*ethtoolPauseStats); !ok || p.conn != o.conn || o.conn.path != "/run/netns/x" {
		t.Errorf("live pause stats = %#v", o.pauseStats)
	}
}
