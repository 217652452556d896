package irq

import (
	"errors"
	"io/fs"
	"strconv"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// Affinity sources, as reported in QueueIRQ.CPUSource.
const (
	SourceEffective = "effective_affinity_list" // where the IRQ actually lands
	SourceSMP       = "smp_affinity_list"       // where it is allowed to land
)

// affinity is what /proc/irq/N says about one IRQ.
type affinity struct {
	IRQ int `json:"irq"`
	// Allowed is smp_affinity_list; nil when unreadable.
	Allowed []int `json:"allowed,omitempty"`
	// Effective is effective_affinity_list; nil when the kernel does not
	// have it (before 4.15, or some irqchips) or it was unreadable.
	Effective []int `json:"effective,omitempty"`
	// Node is the NUMA node of the IRQ; -1 when unknown.
	Node int `json:"node"`
}

// CPUs returns where the IRQ lands: the effective list when there is one,
// otherwise the allowed list, and the name of the file it came from ("" when
// neither could be read).
func (a affinity) CPUs() ([]int, string) {
	if len(a.Effective) > 0 {
		return a.Effective, SourceEffective
	}
	if len(a.Allowed) > 0 {
		return a.Allowed, SourceSMP
	}
	return nil, ""
}

// readAffinity reads /proc/irq/N/{smp_affinity_list,effective_affinity_list,node}
// under the root. Missing files leave their field empty; the error is
// non-nil only when none of them could be read or one is malformed.
func readAffinity(r fsroot.Root, irq int) (affinity, error) {
	a := affinity{IRQ: irq, Node: -1}
	dir := "/proc/irq/" + strconv.Itoa(irq) + "/"
	var firstErr error
	read := 0
	for _, f := range []struct {
		name string
		dst  *[]int
	}{{"smp_affinity_list", &a.Allowed}, {"effective_affinity_list", &a.Effective}} {
		s, err := r.ReadString(dir + f.name)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		read++
		cpus, err := ParseCPUList(s)
		if err != nil {
			return a, &ParseError{File: dir + f.name, Err: err}
		}
		*f.dst = cpus
	}
	if n, err := r.ReadInt(dir + "node"); err == nil {
		a.Node = int(n)
		read++
	} else if !errors.Is(err, fs.ErrNotExist) && firstErr == nil {
		firstErr = err
	}
	if read == 0 {
		return a, firstErr
	}
	return a, nil
}
