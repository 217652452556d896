package stack

import (
	"bytes"

	"github.com/nicdiag/nicdiag/internal/text"
)

// The socket layer's counters, by index into counters.
const (
	cUDPIn = iota
	cUDPOut
	cUDPNoPorts
	cUDPInErrors
	cUDPRcvbuf
	cUDPSndbuf
	cUDPMem
	cTCPInSegs
	cTCPOutSegs
	cTCPRetrans
	cTCPPassiveOpens
	cRcvQDrop
	cBacklogDrop
	cZeroWindowDrop
	cOFODrop
	cPruneCalled
	cRcvPruned
	cListenOverflows
	cListenDrops
	cMemPressures
	nCounters
)

// counters are the socket layer's cumulative counts at a reading.
type counters [nCounters]uint64

// tableNames maps the sections of /proc/net/snmp and /proc/net/netstat
// (each a header line of names and a line of values) to the counters kept.
var tableNames = map[string]map[string]int{
	"Udp:": {"InDatagrams": cUDPIn, "OutDatagrams": cUDPOut, "NoPorts": cUDPNoPorts, "InErrors": cUDPInErrors,
		"RcvbufErrors": cUDPRcvbuf, "SndbufErrors": cUDPSndbuf, "MemErrors": cUDPMem},
	"Tcp:": {"InSegs": cTCPInSegs, "OutSegs": cTCPOutSegs, "RetransSegs": cTCPRetrans, "PassiveOpens": cTCPPassiveOpens},
	"TcpExt:": {"TCPRcvQDrop": cRcvQDrop, "TCPBacklogDrop": cBacklogDrop, "TCPZeroWindowDrop": cZeroWindowDrop,
		"TCPOFODrop": cOFODrop, "PruneCalled": cPruneCalled, "RcvPruned": cRcvPruned,
		"ListenOverflows": cListenOverflows, "ListenDrops": cListenDrops, "TCPMemoryPressures": cMemPressures},
}

// snmp6Names maps the lines of /proc/net/snmp6 kept to counters: IPv6's
// UDP counts are added to IPv4's.
var snmp6Names = map[string]int{"Udp6InDatagrams": cUDPIn, "Udp6OutDatagrams": cUDPOut, "Udp6NoPorts": cUDPNoPorts,
	"Udp6InErrors": cUDPInErrors, "Udp6RcvbufErrors": cUDPRcvbuf, "Udp6SndbufErrors": cUDPSndbuf, "Udp6MemErrors": cUDPMem}

// maxLine bounds one line of a parsed /proc file.
const maxLine = 64 << 10

// nextLine returns the first line of b (without its newline) and the rest.
func nextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// nextField returns the first space-separated field of b and the rest.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	j := i
	for j < len(b) && b[j] != ' ' && b[j] != '\t' {
		j++
	}
	return b[i:j], b[j:]
}

// parseTables adds the kept counters of a /proc/net/snmp or
// /proc/net/netstat file, b, into c. Each section is a line of names and a
// line of values, both starting with the section's name ("Udp:"); the two
// must have as many fields, and a kept counter must be an unsigned
// decimal. Sections not kept are checked for shape alone (their values
// may be negative: Tcp MaxConn is -1).
func parseTables(file string, b []byte, c *counters) error {
	for n := 1; len(b) > 0; n += 2 {
		var names, values []byte
		names, b = nextLine(b)
		if len(bytes.TrimSpace(names)) == 0 && len(b) == 0 {
			break
		}
		if len(b) == 0 {
			return malformed(file, n, "a line of names without its values")
		}
		values, b = nextLine(b)
		if len(names) > maxLine || len(values) > maxLine {
			return malformed(file, n, "%w: line over %d bytes", ErrTooLarge, maxLine)
		}
		if err := parseSection(file, n, names, values, c); err != nil {
			return err
		}
	}
	return nil
}

// parseSection parses one section: names on line n, values on line n+1.
func parseSection(file string, n int, names, values []byte, c *counters) error {
	prefix, names := nextField(names)
	vprefix, values := nextField(values)
	if len(prefix) < 2 || prefix[len(prefix)-1] != ':' || !bytes.Equal(prefix, vprefix) {
		return malformed(file, n, "section %q followed by %q", text.Clip(string(prefix)), text.Clip(string(vprefix)))
	}
	kept := tableNames[string(prefix)]
	for {
		var name, value []byte
		name, names = nextField(names)
		value, values = nextField(values)
		if len(name) == 0 && len(value) == 0 {
			return nil
		}
		if len(name) == 0 || len(value) == 0 {
			return malformed(file, n+1, "section %s: as many values as names wanted", prefix)
		}
		i, ok := kept[string(name)]
		if !ok {
			continue
		}
		v, ok := text.Uint(value)
		if !ok {
			return malformed(file, n+1, "%s%s: not a count: %q", prefix, name, text.Clip(string(value)))
		}
		c[i] += v
	}
}

// parseSNMP6 adds the kept counters of /proc/net/snmp6, b (a name and a
// value on each line), into c.
func parseSNMP6(b []byte, c *counters) error {
	for n := 1; len(b) > 0; n++ {
		var line []byte
		line, b = nextLine(b)
		if len(line) > maxLine {
			return malformed(snmp6File, n, "%w: line over %d bytes", ErrTooLarge, maxLine)
		}
		name, rest := nextField(line)
		if len(name) == 0 {
			continue
		}
		value, rest := nextField(rest)
		if extra, _ := nextField(rest); len(value) == 0 || len(extra) > 0 {
			return malformed(snmp6File, n, "want a name and a value: %q", text.Clip(string(line)))
		}
		i, ok := snmp6Names[string(name)]
		if !ok {
			continue
		}
		v, ok := text.Uint(value)
		if !ok {
			return malformed(snmp6File, n, "%s: not a count: %q", name, text.Clip(string(value)))
		}
		c[i] += v
	}
	return nil
}

// delta returns the counts from prev to cur as SocketCounters; a counter
// that went back (a namespace re-created) counts from 0.
func (cur *counters) delta(prev *counters) SocketCounters {
	var d counters
	for i := range d {
		d[i] = sub64(cur[i], prev[i])
	}
	return SocketCounters{UDPInDatagrams: d[cUDPIn], UDPOutDatagrams: d[cUDPOut], UDPNoPorts: d[cUDPNoPorts],
		UDPInErrors: d[cUDPInErrors], UDPRcvbufErrors: d[cUDPRcvbuf], UDPSndbufErrors: d[cUDPSndbuf], UDPMemErrors: d[cUDPMem],
		TCPInSegs: d[cTCPInSegs], TCPOutSegs: d[cTCPOutSegs], TCPRetransSegs: d[cTCPRetrans], TCPPassiveOpens: d[cTCPPassiveOpens],
		TCPRcvQDrop: d[cRcvQDrop], TCPBacklogDrop: d[cBacklogDrop], TCPZeroWindowDrop: d[cZeroWindowDrop],
		TCPOFODrop: d[cOFODrop], PruneCalled: d[cPruneCalled], RcvPruned: d[cRcvPruned],
		ListenOverflows: d[cListenOverflows], ListenDrops: d[cListenDrops], TCPMemoryPressures: d[cMemPressures]}
}

// sub64 is a-b, or a when the count went back (a namespace or socket
// re-created).
func sub64(a, b uint64) uint64 {
	if a >= b {
		return a - b
	}
	return a
}
