package main

import (
	"fmt"
	"github.com/nicdiag/nicdiag/internal/unit"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

// pathSection is the PCIe path hop by hop, device first: both ends of every
// link, as trained and as capable, with MPS/MRRS and the verdict.
func pathSection(p *pcie.Path) showSection {
	s := showSection{Title: "PCIe path (device first, up to the root port)"}
	if p == nil {
		return s
	}
	if p.Architectural != "" {
		s.add("Link", "not judged: "+p.Architectural)
	}
	if len(p.Hops) == 0 {
		return s
	}
	s.Body = func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "\thop\tport → device\ttrained\tcapable\tport max\tdevice max\tMPS port/device, MRRS\tshared by\tverdict\n")
		for i, h := range p.Hops {
			verdict := string(h.Verdict)
			if h.Reason != "" {
				verdict += " (" + h.Reason + ")"
			}
			fmt.Fprintf(tw, "\t%d\t%s → %s\t%s\t%s\t%s\t%s\t%s\t%d function(s)\t%s\n", i,
				h.Upstream.Address, h.Downstream.Address,
				speedWidth(h.Speed, h.Width), speedWidth(h.CapableSpeed, h.CapableWidth)+limitedBy(&h),
				speedWidth(h.Upstream.Link.MaxSpeed, h.Upstream.Link.MaxWidth),
				speedWidth(h.Downstream.Link.MaxSpeed, h.Downstream.Link.MaxWidth),
				sizes(h.Upstream.MaxPayload, h.Downstream.MaxPayload, h.Downstream.MaxReadRequest), len(h.Functions), verdict)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, e := range pathEnds(p) {
			if e.Name != "" {
				fmt.Fprintf(w, "  %s: %s\n", e.Address, e.Name)
			}
		}
		for _, n := range p.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		return nil
	}
	return s
}

// pathEnds returns every end on the path, device first, each once.
func pathEnds(p *pcie.Path) []*pcie.End {
	var out []*pcie.End
	seen := map[pcie.Address]bool{}
	for i := range p.Hops {
		for _, e := range []*pcie.End{&p.Hops[i].Downstream, &p.Hops[i].Upstream} {
			if !seen[e.Address] {
				seen[e.Address] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// nameEnds fills in the pci.ids name of every end on the path; without a
// pci.ids the ends stay unnamed (the inventory already says why).
func nameEnds(p *pcie.Path, root string) {
	if p == nil {
		return
	}
	var q nicinfo.PCIQuery
	ends := pathEnds(p)
	for _, e := range ends {
		q.Add(e.VendorID, e.DeviceID, 0, 0, e.Class)
	}
	names, err := nicinfo.LookupNames(&q, option.Root(root))
	if err != nil {
		return
	}
	for _, e := range ends {
		e.Name = strings.TrimSpace(names.Vendor(e.VendorID) + " " + names.Device(e.VendorID, e.DeviceID))
	}
}

// sizes renders the MPS of both ends and the device's MRRS ("128/256, 512").
func sizes(portMPS, devMPS, mrrs int) string {
	if portMPS <= 0 && devMPS <= 0 && mrrs <= 0 {
		return "unknown (config not readable)"
	}
	v := func(n int) string {
		if n <= 0 {
			return "?"
		}
		return fmt.Sprint(n)
	}
	return v(portMPS) + "/" + v(devMPS) + ", " + v(mrrs)
}

// budgetSection is the default workload's budget in one line.
func budgetSection(b *budget.Budget) showSection {
	s := showSection{Title: "Throughput budget (default workload; see 'nicdiag explain')"}
	if b == nil {
		return s
	}
	if b.NoPCIe != "" {
		s.add("PCIe", "none to model: "+b.NoPCIe)
	}
	if b.Bound == budget.BoundNone {
		s.add("Ceiling", "no physical ceiling known (link speed unknown or nominal)")
		return s
	}
	s.add("Workload", fmt.Sprintf("%d port(s) at %s, %d-byte frames, %s", b.Workload.Ports, unit.Mbps(b.Workload.PortMbps), b.Workload.FrameBytes, directionWords(b.Workload.Direction)))
	if b.PortSpeedSource != budget.FromDriver {
		s.add("Port speed", string(b.PortSpeedSource))
	}
	s.add("Line rate", unit.Mbps(b.EthernetMbps)+" per direction")
	if b.NoPCIe == "" {
		s.add("PCIe carries", rangeWords(b.PCIeMbps)+" per direction")
	}
	s.add("Ceiling", fmt.Sprintf("%s, %s-bound", rangeWords(b.CeilingMbps), b.Bound))
	addSharers(&s, b)
	return s
}

// queueSection maps the NIC's queues to their IRQs and the CPUs they land on.
func queueSection(q *irq.NICQueues) showSection {
	s := showSection{Title: "Queue IRQs"}
	if q == nil || len(q.Queues) == 0 {
		return s
	}
	s.add("Found by", q.MatchedBy)
	s.Body = func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "\tirq\taction\tkind\tqueue\tCPUs\tallowed\n")
		for _, x := range q.Queues {
			queue := "-"
			if x.Index >= 0 {
				queue = fmt.Sprint(x.Index)
			}
			fmt.Fprintf(tw, "\t%d\t%s\t%s\t%s\t%s\t%s\n", x.IRQ, x.Action, x.Kind, queue, irq.FormatCPUList(x.CPUs), irq.FormatCPUList(x.Allowed))
		}
		return tw.Flush()
	}
	return s
}

// findingSection lists the findings about the NIC, worst first.
func findingSection(fs []finding.Finding) showSection {
	s := showSection{Title: "Findings"}
	if len(fs) == 0 {
		s.add("None", "no finding")
		return s
	}
	s.Body = func(w io.Writer) error {
		for _, f := range fs {
			fmt.Fprintf(w, " %-5s %s  %s\n       %s\n", strings.ToUpper(f.Severity.String()), f.Code, f.Subject, f.Summary)
			if f.Fix != "" {
				fmt.Fprintf(w, "       fix: %s\n", f.Fix)
			}
		}
		return nil
	}
	return s
}
