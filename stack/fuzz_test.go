package stack

import (
	"errors"
	"os"
	"testing"
)

// checkErr fails for an error that is neither malformed input nor too
// large: the parsers have no other way to fail.
func checkErr(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, ErrMalformed) {
		t.Fatalf("error not ErrMalformed: %v", err)
	}
}

func seedFiles(f *testing.F, paths ...string) {
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// FuzzParseTables: /proc/net/snmp and /proc/net/netstat, any input.
func FuzzParseTables(f *testing.F) {
	seedFiles(f, "testdata/vm-6.18/proc/net/snmp", "testdata/vm-6.18/proc/net/netstat", "testdata/udp-rcvbuf/after/proc/net/snmp")
	f.Add([]byte("Udp: InDatagrams\nUdp: 1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c counters
		checkErr(t, parseTables(snmpFile, b, &c))
	})
}

// FuzzParseSNMP6: /proc/net/snmp6, any input.
func FuzzParseSNMP6(f *testing.F) {
	seedFiles(f, "testdata/vm-6.18/proc/net/snmp6")
	f.Fuzz(func(t *testing.T, b []byte) {
		var c counters
		checkErr(t, parseSNMP6(b, &c))
	})
}

// FuzzParseConntrackStat: /proc/net/stat/nf_conntrack, any input.
func FuzzParseConntrackStat(f *testing.F) {
	seedFiles(f, "testdata/vm-6.18/proc/net/stat/nf_conntrack", "testdata/conntrack-full/after/proc/net/stat/nf_conntrack")
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := parseConntrackStat(b)
		checkErr(t, err)
	})
}

// FuzzParseSysctl: the buffer and conntrack sysctls, any input.
func FuzzParseSysctl(f *testing.F) {
	f.Add([]byte("4096\t131072\t33554432\n"))
	f.Add([]byte("262144\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := parseTriplet(tcpRmemFile, b)
		checkErr(t, err)
		_, err = parseInt(rmemMaxFile, b)
		checkErr(t, err)
	})
}

// FuzzParseDiagMsg: a sock_diag answer, any input; what parses renders
// its addresses.
func FuzzParseDiagMsg(f *testing.F) {
	for _, n := range []int{104, 192, 232, 280} {
		f.Add(diagMessage(n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m diagMsg
		err := parseDiagMsg(b, &m)
		checkErr(t, err)
		if err == nil {
			m.addrs()
			stateName(m.state)
		}
	})
}

// FuzzCakeRate: the attributes of a qdisc answer, any input.
func FuzzCakeRate(f *testing.F) {
	f.Add(cakeMessage("cake", 12500000))
	f.Add(cakeMessage("tbf", 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, err := cakeRate(b)
		checkErr(t, err)
	})
}
