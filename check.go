// Package nicdiag joins the inventory (nicinfo), the PCIe path (pcie), the
// throughput model (budget) and the interrupt placement (irq) into the
// verdicts of `nicdiag check` and `nicdiag explain`. Inspect gathers a
// host's facts once into a Host; Check runs the list of checks over it.
package nicdiag

import (
	"context"
	"fmt"
	"slices"

	"github.com/nicdiag/nicdiag/finding"
)

// Checker is one family of verdicts: a name, the codes it may emit, and
// the function that judges a Host. A checker writes each finding's final
// severity and sentence itself and judges the selected NICs
// (Host.Selected).
type Checker struct {
	Name  string
	Codes []finding.Code
	Run   func(h *Host) []finding.Finding
}

// perNIC runs checks on each selected NIC in turn, in order, and returns
// the findings they make.
func perNIC(h *Host, checks ...func(*NIC) (finding.Finding, bool)) []finding.Finding {
	var out []finding.Finding
	for _, n := range h.Selected {
		for _, c := range checks {
			if f, ok := c(n); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// Checkers returns the checks Check runs, in order. Each lives in a file
// of its own (check_*.go).
func Checkers() []Checker {
	return []Checker{
		identityCheck,
		linkModesCheck,
		pcieLinkCheck,
		bottleneckCheck,
		uplinkCheck,
		queuesCheck,
		localityCheck,
		ringsCheck,
		virtualCheck,
		offloadsCheck,
		coalesceCheck,
		cpuCheck,
		idleCheck,
		pcieHealthCheck,
		ethlinkCheck,
		bondCheck,
		throttleCheck,
		linkErrorsCheck,
		moduleCheck,
		stackCheck,
		overlayCheck,
		workaroundCheck,
		incompleteCheck,
	}
}

// CheckersNamed returns the checkers of Checkers called names, in
// Checkers' order; a name no checker has is an error.
func CheckersNamed(names ...string) ([]Checker, error) {
	var out []Checker
	all := Checkers()
	for _, n := range names {
		if !slices.ContainsFunc(all, func(c Checker) bool { return c.Name == n }) {
			return nil, fmt.Errorf("nicdiag: no checker %q", n)
		}
	}
	for _, c := range all {
		if slices.Contains(names, c.Name) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Report is what Check found: the host it inspected and every finding,
// worst first.
type Report struct {
	Host     *Host             `json:"host"`
	Findings []finding.Finding `json:"findings"`
}

// Check inspects the host (see Inspect) and runs every checker over it.
// With WithInterfaces it reports on those NICs only: on their interfaces,
// PCI functions and the ports of their PCIe paths.
func Check(ctx context.Context, opts ...Option) (*Report, error) {
	h, err := Inspect(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return &Report{Host: h, Findings: h.Check(Checkers()...)}, nil
}

// Check runs the checkers over h and returns their findings about the
// selected NICs, one per (code, subject), worst first.
func (h *Host) Check(cs ...Checker) []finding.Finding {
	out := []finding.Finding{}
	type key struct {
		code    finding.Code
		subject string
	}
	seen := map[key]bool{}
	subjects := h.subjects()
	for _, c := range cs {
		for _, f := range c.Run(h) {
			k := key{f.Code, f.Subject}
			if seen[k] || !subjects[f.Subject] {
				continue
			}
			seen[k] = true
			out = append(out, f)
		}
	}
	finding.Sort(out)
	return out
}

// HostSubject is the subject of a finding about the whole host rather than
// one NIC (nicdiag.incomplete when /proc/interrupts or the PCI functions
// without a netdev could not be read). Check always keeps it, whatever the
// selection.
const HostSubject = "host"

// subjects are the names a finding about the selection may carry: the
// selected interfaces, their PCI functions, the ends of their paths, and
// HostSubject.
func (h *Host) subjects() map[string]bool {
	s := map[string]bool{HostSubject: true}
	for _, id := range h.Identity {
		// A card's verdict is about all of its functions: it stays when any
		// of them is selected.
		for _, name := range id.Interfaces {
			if m := h.named(name); m != nil && m.Selected {
				s[id.Finding.Subject] = true
			}
		}
	}
	for _, n := range h.NICs {
		if n.Bond != nil && h.anySelected(n.Bond.Slaves) {
			s[n.Name] = true // a bond over a selected NIC (bond.*)
		}
		if tunnelKind(n) != "" && (h.every || n.Selected) {
			s[n.Name] = true // a VXLAN or Geneve device (nic.tunnel_offload)
		}
	}
	for _, n := range h.Selected {
		s[n.ID()] = true
		if n.PCI != nil && n.Judged() {
			s[string(n.PCI.Address)] = true
		}
		if n.Path != nil && n.Judged() {
			for _, hop := range n.Path.Hops {
				s[string(hop.Upstream.Address)] = true
				s[string(hop.Downstream.Address)] = true
			}
		}
	}
	return s
}

// Interfaces returns the names of the selected network interfaces.
func (r *Report) Interfaces() []string {
	var out []string
	for _, n := range r.Host.Selected {
		if n.Netdev() {
			out = append(out, n.Name)
		}
	}
	return out
}
