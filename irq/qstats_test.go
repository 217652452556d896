package irq

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
)

// The messages below are built by hand from the layout in the kernel's
// include/uapi/linux/netdev.h and linux/genetlink.h: a 4-byte genlmsghdr
// (cmd NETDEV_CMD_QSTATS_GET = 12, version 1, reserved), then flat nlattrs
// (u16 length incl. header, u16 type, value, padded to 4 bytes).

func nla(typ uint16, v []byte) []byte {
	b := make([]byte, 4, 4+len(v)+3)
	binary.NativeEndian.PutUint16(b[0:], uint16(4+len(v)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }

func qstatsMsg(attrs ...[]byte) []byte {
	b := []byte{netdevCmdQstatsGet, netdevFamilyVersion, 0, 0}
	for _, a := range attrs {
		b = append(b, a...)
	}
	return b
}

func qrow(ifindex, qtype, qid uint32, extra ...[]byte) []byte {
	return qstatsMsg(append([][]byte{nla(netdevAQstatsIfindex, u32(ifindex)),
		nla(netdevAQstatsQueueType, u32(qtype)), nla(netdevAQstatsQueueID, u32(qid))}, extra...)...)
}

func TestParseQstatsDump(t *testing.T) {
	msgs := [][]byte{
		// rx 0: counters that fit in 32 bits come as 4 bytes (nla_put_uint)
		qrow(4, netdevQueueTypeRX, 0, nla(netdevAQstatsRxPackets, u32(13516)), nla(netdevAQstatsRxBytes, u32(411004270)),
			nla(netdevAQstatsRxAllocFail, u32(7))), // a loss counter, summed into Losses
		// rx 1: 8-byte counters, packets only
		qrow(4, netdevQueueTypeRX, 1, nla(netdevAQstatsRxPackets, u64(1<<40))),
		// tx 0: with NLA_F_NET_BYTEORDER-free flags masked (NLA_F_NESTED on an unknown attr)
		qrow(4, netdevQueueTypeTX, 0, nla(netdevAQstatsTxPackets, u32(8653)), nla(netdevAQstatsTxBytes, u64(766169)),
			nla(0x8000|99, nil)),
		// another interface: skipped
		qrow(5, netdevQueueTypeRX, 0, nla(netdevAQstatsRxPackets, u32(1))),
		// a queue with only counters we do not read: no entry
		qrow(4, netdevQueueTypeTX, 1, nla(21, u32(3))),
	}
	c, err := parseQstatsDump(msgs, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RX[0]; got != (queueCounter{Packets: 13516, Bytes: 411004270, HasPackets: true, HasBytes: true}) {
		t.Errorf("rx 0 = %+v", got)
	}
	if got := c.RX[1]; got != (queueCounter{Packets: 1 << 40, HasPackets: true}) {
		t.Errorf("rx 1 = %+v", got)
	}
	if got := c.TX[0]; got != (queueCounter{Packets: 8653, Bytes: 766169, HasPackets: true, HasBytes: true}) {
		t.Errorf("tx 0 = %+v", got)
	}
	if len(c.RX) != 2 || len(c.TX) != 1 {
		t.Errorf("counters = %+v", c)
	}
	if len(c.Losses) != 1 || c.Losses["qstats:rx-alloc-fail"] != (lossCounter{LossNIC, 7}) {
		t.Errorf("losses = %+v", c.Losses)
	}
	if c, err := parseQstatsDump(msgs, 9); err != nil || len(c.RX)+len(c.TX) != 0 {
		t.Errorf("other ifindex: %+v, %v", c, err)
	}
	// The last attribute's padding may be missing.
	m := qrow(4, netdevQueueTypeRX, 0, nla(netdevAQstatsRxBytes, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	m = append(m, nla(99, []byte{1})[:5]...)
	if _, err := parseQstatsDump([][]byte{m}, 4); err != nil {
		t.Errorf("unpadded last attribute: %v", err)
	}
}

// TestParseQstatsDumpLosses sums the receive drop counters over the rx
// queues of the interface, also from a row with no packet counters, and
// leaves out the ones no row has.
func TestParseQstatsDumpLosses(t *testing.T) {
	msgs := [][]byte{
		qrow(4, netdevQueueTypeRX, 0, nla(netdevAQstatsRxPackets, u32(10)),
			nla(netdevAQstatsRxHwDrops, u32(5)), nla(netdevAQstatsRxHwDropOverruns, u64(1<<33))),
		qrow(4, netdevQueueTypeRX, 1, nla(netdevAQstatsRxHwDrops, u32(0)), nla(netdevAQstatsRxHwDropOverruns, u32(2))),
		qrow(4, netdevQueueTypeTX, 0, nla(netdevAQstatsTxPackets, u32(3))),
		qrow(5, netdevQueueTypeRX, 0, nla(netdevAQstatsRxHwDrops, u32(1000))), // another interface
	}
	c, err := parseQstatsDump(msgs, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := lossCounters{"qstats:rx-hw-drops": {LossNIC, 5}, "qstats:rx-hw-drop-overruns": {LossNIC, 1<<33 + 2}}
	if len(c.Losses) != len(want) || c.Losses["qstats:rx-hw-drops"] != want["qstats:rx-hw-drops"] ||
		c.Losses["qstats:rx-hw-drop-overruns"] != want["qstats:rx-hw-drop-overruns"] {
		t.Errorf("losses = %+v, want %+v", c.Losses, want)
	}
	if len(c.RX) != 1 || len(c.TX) != 1 {
		t.Errorf("queues = %+v", c)
	}
	if c.Ethtool {
		t.Error("qstats counters say they are ethtool's")
	}
	// A loss counter of the wrong width is malformed, as any uint is.
	bad := qrow(4, netdevQueueTypeRX, 0, nla(netdevAQstatsRxHwDrops, []byte{1, 2}))
	if _, err := parseQstatsDump([][]byte{bad}, 4); !errors.Is(err, ErrMalformed) {
		t.Errorf("2-byte rx-hw-drops: %v", err)
	}
}

func TestParseQstatsDumpRefuses(t *testing.T) {
	good := qrow(4, netdevQueueTypeRX, 0, nla(netdevAQstatsRxPackets, u32(1)))
	for name, m := range map[string][][]byte{
		"short genl header": {{12, 1}},
		"other command":     {append([]byte{10, 1, 0, 0}, good[4:]...)},
		"truncated attr":    {good[:len(good)-2]},
		"attr header only":  {append(qrow(4, 0, 0), 8, 0)},
		"attr len < 4":      {append(qrow(4, 0, 0), 2, 0, 8, 0)},
		"attr len past end": {append(qrow(4, 0, 0), 64, 0, 8, 0, 1, 2, 3, 4)},
		"u32 of 8 bytes":    {qstatsMsg(nla(netdevAQstatsIfindex, u64(4)), nla(netdevAQstatsQueueType, u32(0)), nla(netdevAQstatsQueueID, u32(0)))},
		"uint of 2 bytes":   {qrow(4, 0, 0, nla(netdevAQstatsRxPackets, []byte{1, 2}))},
		"no queue id":       {qstatsMsg(nla(netdevAQstatsIfindex, u32(4)), nla(netdevAQstatsQueueType, u32(0)))},
		"device scope row":  {qstatsMsg(nla(netdevAQstatsIfindex, u32(4)), nla(netdevAQstatsRxPackets, u32(4)))},
		"ifindex 0":         {qrow(0, 0, 0)},
		"queue type 2":      {qrow(4, 2, 0)},
		"queue id too big":  {qrow(4, 0, maxQstatsQueue+1)},
		"duplicate row":     {good, good},
	} {
		c, err := parseQstatsDump(m, 4)
		if err == nil {
			t.Errorf("%s: no error, %+v", name, c)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v does not wrap ErrMalformed", name, err)
		}
		if len(c.RX)+len(c.TX) != 0 {
			t.Errorf("%s: error %v with counters %+v", name, err, c)
		}
	}
}

func FuzzParseQstatsDump(f *testing.F) {
	f.Add(qrow(4, netdevQueueTypeRX, 0, nla(netdevAQstatsRxPackets, u32(13516)), nla(netdevAQstatsRxBytes, u64(411004270))), 8)
	f.Add(qrow(4, netdevQueueTypeTX, 3, nla(netdevAQstatsTxPackets, u32(1)), nla(netdevAQstatsTxBytes, u32(2))), 0)
	f.Add([]byte{12, 1, 0, 0, 5, 0, 1, 0, 4}, 3)
	f.Add(qrow(4, netdevQueueTypeRX, 1, nla(netdevAQstatsRxAllocFail, u32(1)), nla(netdevAQstatsRxHwDrops, u64(2)),
		nla(netdevAQstatsRxHwDropOverruns, u32(3))), 12)
	f.Fuzz(func(t *testing.T, b []byte, split int) {
		// One message, or two cut at split.
		msgs := [][]byte{b}
		if split > 0 && split < len(b) {
			msgs = [][]byte{b[:split], b[split:]}
		}
		c, err := parseQstatsDump(msgs, 4)
		if err != nil {
			if len(c.RX)+len(c.TX)+len(c.Losses) != 0 {
				t.Fatalf("error %v with counters", err)
			}
			return
		}
		for name, l := range c.Losses {
			if !slices.Contains(qstatsLosses[:], name) || l.Class != LossNIC {
				t.Fatalf("loss %q: %+v", name, l)
			}
		}
		for _, m := range []map[int]queueCounter{c.RX, c.TX} {
			for q, v := range m {
				if q < 0 || q > maxQstatsQueue || !v.HasPackets && !v.HasBytes {
					t.Fatalf("queue %d: %+v", q, v)
				}
			}
		}
	})
}

func TestFirstQueueStats(t *testing.T) {
	some := queueCounters{RX: map[int]queueCounter{0: {Packets: 1, HasPackets: true}}, TX: map[int]queueCounter{}}
	other := queueCounters{RX: map[int]queueCounter{}, TX: map[int]queueCounter{1: {Bytes: 2, HasBytes: true}}}
	var asked []string
	primary := queueStatsFunc(func(iface string) (queueCounters, error) {
		asked = append(asked, "netdev:"+iface)
		switch iface {
		case "qs":
			return some, nil
		case "none":
			return queueCounters{}, errNoQstats
		}
		return queueCounters{}, errors.New("Link not found")
	})
	fallback := queueStatsFunc(func(iface string) (queueCounters, error) {
		asked = append(asked, "ethtool:"+iface)
		if iface == "gone" {
			return queueCounters{}, errors.New("no such device")
		}
		return other, nil
	})
	s := firstQueueStats{primary, fallback}
	if c, err := s.counters("qs"); err != nil || c.RX[0].Packets != 1 {
		t.Errorf("qs: %+v %v", c, err)
	}
	if c, err := s.counters("none"); err != nil || c.TX[1].Bytes != 2 {
		t.Errorf("none: %+v %v", c, err)
	}
	if _, err := s.counters("gone"); err == nil || err.Error() != "no such device" {
		t.Errorf("gone: %v, want ethtool's error", err)
	}
	if got := strings.Join(asked, " "); got != "netdev:qs netdev:none ethtool:none netdev:gone ethtool:gone" {
		t.Errorf("asked %s", got)
	}
}

// parseQstatsDump turns the messages of a NETDEV_CMD_QSTATS_GET dump (each
// the payload after the nlmsghdr: genlmsghdr, then attributes) into the
// counters of the interface ifindex. Rows of other interfaces are skipped;
// a counter absent from a row is one the driver does not fill. The loss
// counters (qstatsLosses) are summed over the rows that have them, into
// Losses; a queue-scope dump leaves out what a driver counts outside its
// queues (its base statistics), so the sums can fall short of the device's.
// A truncated, malformed or contradictory message is an error.
func parseQstatsDump(msgs [][]byte, ifindex uint32) (queueCounters, error) {
	a := qstatsAcc{out: &queueCounters{}, ifindex: ifindex}
	a.reset()
	for _, m := range msgs {
		if err := a.add(m); err != nil {
			return queueCounters{}, err
		}
	}
	return *a.out, nil
}
