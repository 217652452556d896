package stack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/nicdiag/nicdiag/internal/text"
)

// The files a namespace is read from, as the kernel lays them out. Under
// the live host, in a namespace other than the caller's, /proc/net is
// opened as /proc/thread-self/net on a thread inside the namespace.
const (
	snmpFile           = "/proc/net/snmp"
	snmp6File          = "/proc/net/snmp6"
	netstatFile        = "/proc/net/netstat"
	conntrackStatFile  = "/proc/net/stat/nf_conntrack"
	conntrackCountFile = "/proc/sys/net/netfilter/nf_conntrack_count"
	conntrackMaxFile   = "/proc/sys/net/netfilter/nf_conntrack_max"
	tcpRmemFile        = "/proc/sys/net/ipv4/tcp_rmem"
	tcpWmemFile        = "/proc/sys/net/ipv4/tcp_wmem"
	rmemMaxFile        = "/proc/sys/net/core/rmem_max"
	wmemMaxFile        = "/proc/sys/net/core/wmem_max"
	rmemDefaultFile    = "/proc/sys/net/core/rmem_default"
	wmemDefaultFile    = "/proc/sys/net/core/wmem_default"
)

// Indexes of a namespace's files in nsFiles.
const (
	fSNMP = iota
	fSNMP6
	fNetstat
	fCTStat
	fCTCount
	fCTMax
	fTCPRmem
	fTCPWmem
	fRmemMax
	fWmemMax
	fRmemDefault
	fWmemDefault
	nFiles
)

// nsFilePaths are the files by index.
var nsFilePaths = [nFiles]string{snmpFile, snmp6File, netstatFile, conntrackStatFile, conntrackCountFile,
	conntrackMaxFile, tcpRmemFile, tcpWmemFile, rmemMaxFile, wmemMaxFile, rmemDefaultFile, wmemDefaultFile}

// maxProcFile bounds one /proc file read (nf_conntrack's statistics on a
// host of 8192 CPUs are about 1.3 MiB).
const maxProcFile = 4 << 20

// nsFiles are one namespace's files, opened once and read again from
// offset 0 at each reading (procfs regenerates them; a /proc/net or
// /proc/sys/net file opened inside a namespace keeps reading that
// namespace's values).
type nsFiles struct {
	f   [nFiles]*os.File
	err [nFiles]error // why a file could not be opened
}

// close closes every file.
func (n *nsFiles) close() {
	for i, f := range n.f {
		if f != nil {
			f.Close()
			n.f[i] = nil
		}
	}
}

// read reads file i whole into buf's storage and returns it.
func (n *nsFiles) read(i int, buf []byte) ([]byte, error) {
	if n.f[i] == nil {
		if n.err[i] != nil {
			return buf[:0], n.err[i]
		}
		return buf[:0], &fs.PathError{Op: "read", Path: nsFilePaths[i], Err: fs.ErrClosed}
	}
	return readAll(n.f[i], buf)
}

// readAll reads f from offset 0 to its end into buf's storage.
func readAll(f *os.File, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) > maxProcFile {
				return buf[:0], fmt.Errorf("%s: %w (over %d bytes)", f.Name(), ErrTooLarge, maxProcFile)
			}
			buf = append(buf, make([]byte, max(4096, len(buf)))...)[:len(buf)]
		}
		n, err := f.ReadAt(buf[len(buf):cap(buf)], int64(len(buf)))
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return buf, nil
		}
		if err != nil {
			return buf[:0], err
		}
	}
}

// parseInt parses a sysctl holding one integer.
func parseInt(file string, b []byte) (int64, error) {
	f, rest := nextField(bytes.TrimSpace(b))
	if extra, _ := nextField(rest); len(extra) > 0 {
		return 0, malformed(file, 1, "want one number: %q", text.Clip(string(b)))
	}
	return signed(file, f)
}

// parseTriplet parses a sysctl of three integers (tcp_rmem: min, default,
// max).
func parseTriplet(file string, b []byte) ([3]int64, error) {
	var v [3]int64
	rest := bytes.TrimSpace(b)
	for i := range v {
		var f []byte
		f, rest = nextField(rest)
		var err error
		if v[i], err = signed(file, f); err != nil {
			return v, err
		}
	}
	if extra, _ := nextField(rest); len(extra) > 0 {
		return v, malformed(file, 1, "want three numbers: %q", text.Clip(string(b)))
	}
	return v, nil
}

// signed parses a decimal integer with an optional minus sign.
func signed(file string, f []byte) (int64, error) {
	neg := len(f) > 0 && f[0] == '-'
	if neg {
		f = f[1:]
	}
	u, ok := text.Uint(f)
	if !ok || u > 1<<63-1 {
		return 0, malformed(file, 1, "not an integer: %q", text.Clip(string(f)))
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}
