package irq

import (
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// Steering is an interface's software packet steering, per queue.
type Steering struct {
	// RPS maps "rx-N" to the CPUs in its rps_cpus mask (nil when off).
	RPS map[string][]int `json:"rps,omitempty"`
	// XPS maps "tx-N" to the CPUs in its xps_cpus mask.
	XPS map[string][]int `json:"xps,omitempty"`
}

// RPSOn reports whether any receive queue steers to some CPU.
func (s Steering) RPSOn() bool {
	for _, c := range s.RPS {
		if len(c) > 0 {
			return true
		}
	}
	return false
}

// ReadSteering reads /sys/class/net/IFACE/queues/{rx-N/rps_cpus,tx-N/xps_cpus}
// under the root. Unreadable files (xps_cpus on a single-queue device gives
// ENOENT or EINVAL) are skipped; a malformed mask is an error.
func ReadSteering(iface string, opts ...Option) (Steering, error) {
	o := newOptions(opts)
	return readSteering(o.root, iface)
}

func readSteering(r fsroot.Root, iface string) (Steering, error) {
	dir := "/sys/class/net/" + iface + "/queues/"
	names, err := r.ReadDir(dir)
	if err != nil {
		return Steering{}, err
	}
	s := Steering{RPS: map[string][]int{}, XPS: map[string][]int{}}
	for _, q := range names {
		var file string
		var dst map[string][]int
		switch {
		case strings.HasPrefix(q, "rx-"):
			file, dst = "rps_cpus", s.RPS
		case strings.HasPrefix(q, "tx-"):
			file, dst = "xps_cpus", s.XPS
		default:
			continue
		}
		v, err := r.ReadString(dir + q + "/" + file)
		if err != nil {
			continue
		}
		cpus, err := parseCPUMask(v)
		if err != nil {
			return s, &ParseError{File: dir + q + "/" + file, Err: err}
		}
		dst[q] = cpus
	}
	return s, nil
}
