package nicinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/stack"
)

// Conntrack is netfilter's connection-tracking table (of the network
// namespace nicdiag runs in): its entries, its maximum and hash size, and
// its statistics since boot summed over the CPUs. nf_conntrack's sysctls
// (Documentation/networking/nf_conntrack-sysctl.rst) and
// /proc/net/stat/nf_conntrack (net/netfilter/nf_conntrack_standalone.c).
type Conntrack struct {
	Count   int64 `json:"count"`
	Max     int64 `json:"max"`
	Buckets int64 `json:"buckets,omitempty"`
	// Stats are the statistics by the file's column names (found,
	// invalid, insert, insert_failed, drop, early_drop), summed over CPUs
	// by stack.ConntrackStats; nil when the file was not read.
	Stats map[string]uint64 `json:"stats,omitempty"`
}

// Files of the connection tracking and bridge netfilter readers;
// snapshot.Capture copies them.
const (
	ConntrackCountFile   = "/proc/sys/net/netfilter/nf_conntrack_count"
	ConntrackMaxFile     = "/proc/sys/net/netfilter/nf_conntrack_max"
	ConntrackBucketsFile = "/proc/sys/net/netfilter/nf_conntrack_buckets"
	ConntrackStatFile    = "/proc/net/stat/nf_conntrack"
	BridgeNFDir          = "/proc/sys/net/bridge"
	KernelReleaseFile    = "/proc/sys/kernel/osrelease"
)

// BridgeNFFiles are br_netfilter's sysctls: they exist while the module is
// loaded.
var BridgeNFFiles = []string{"bridge-nf-call-iptables", "bridge-nf-call-ip6tables", "bridge-nf-call-arptables"}

// maxConntrackStat bounds /proc/net/stat/nf_conntrack: a line of 17
// columns per possible CPU.
const maxConntrackStat = 1 << 20

// ReadConntrack reads the table's sysctls and statistics under the root
// (option.Root). Without nf_conntrack_count (the module not loaded, an old
// snapshot) it returns an error matching fs.ErrNotExist; a sysctl or
// statistics file that is not what the kernel writes is ErrMalformed.
func ReadConntrack(opts ...Option) (*Conntrack, error) {
	o := applyOptions(opts)
	r := o.root
	c := &Conntrack{}
	var err error
	if c.Count, err = r.ReadInt(ConntrackCountFile); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, wrapErr(err)
		}
		return nil, wrapErr(fmt.Errorf("%w: %s: %v", ErrMalformed, ConntrackCountFile, err))
	}
	if c.Max, err = r.ReadInt(ConntrackMaxFile); err != nil {
		return nil, wrapErr(fmt.Errorf("%w: %s: %v", ErrMalformed, ConntrackMaxFile, err))
	}
	c.Buckets, _ = r.ReadInt(ConntrackBucketsFile)
	if c.Count < 0 || c.Max < 0 {
		return nil, wrapErr(fmt.Errorf("%w: conntrack count %d max %d", ErrMalformed, c.Count, c.Max))
	}
	b, err := r.ReadFileMax(ConntrackStatFile, maxConntrackStat)
	if err == nil {
		if c.Stats, err = stack.ConntrackStats(b); err != nil {
			return nil, wrapErr(fmt.Errorf("%w: %v", ErrMalformed, err))
		}
	}
	return c, nil
}

// BridgeNF is br_netfilter's state: whether bridged frames go through
// iptables, ip6tables and arptables. nil fields were not read.
type BridgeNF struct {
	IPTables  *bool `json:"iptables,omitempty"`
	IP6Tables *bool `json:"ip6tables,omitempty"`
	ARPTables *bool `json:"arptables,omitempty"`
}

// ReadBridgeNF reads br_netfilter's sysctls under the root; an error
// matching fs.ErrNotExist when the module is not loaded (none exists).
func ReadBridgeNF(opts ...Option) (*BridgeNF, error) {
	o := applyOptions(opts)
	x := &BridgeNF{}
	found := false
	for i, dst := range []**bool{&x.IPTables, &x.IP6Tables, &x.ARPTables} {
		b, err := o.root.ReadFileMax(BridgeNFDir+"/"+BridgeNFFiles[i], 64)
		if err != nil {
			continue
		}
		v, err := parseSysctlBool(string(b))
		if err != nil {
			return nil, wrapErr(fmt.Errorf("%w: %s: %v", ErrMalformed, BridgeNFFiles[i], err))
		}
		*dst, found = &v, true
	}
	if !found {
		return nil, wrapErr(fmt.Errorf("br_netfilter not loaded: %w", fs.ErrNotExist))
	}
	return x, nil
}

// ReadKernelRelease reads /proc/sys/kernel/osrelease under the root; ""
// when it cannot be read.
func ReadKernelRelease(opts ...Option) string {
	o := applyOptions(opts)
	b, err := o.root.ReadFileMax(KernelReleaseFile, 256)
	if err != nil {
		return ""
	}
	return text.Clip(strings.TrimSpace(string(b)))
}

// KernelVersion returns the major and minor version of a kernel release
// ("6.1.0-18-amd64" is 6, 1); ok is false when it does not start with
// them: decimal digits, a dot, decimal digits (no sign, no overflow).
func KernelVersion(release string) (major, minor int, ok bool) {
	a, rest, ok1 := strings.Cut(release, ".")
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if !ok1 || a == "" || strings.Trim(a, "0123456789") != "" {
		return 0, 0, false
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(rest[:end])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return x, y, true
}
