package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/pcie"
)

// renderSharers writes, under the hop table, the modelled chipset uplink
// and, for each hop that other devices share, what they can take of it.
func renderSharers(w io.Writer, b *budget.Budget) {
	if c := b.Chipset(); c != nil && c.Chipset != nil {
		fmt.Fprintf(w, "   %s → %s: the %s between the CPU and the %s chipset, %s GT/s x%d from %s\n",
			c.Upstream.Address, c.Downstream.Address, c.Chipset.Link, c.Chipset.Chipset, pcie.FormatGTs(c.Speed), c.Width, c.Chipset.Source)
		if c.Chipset.Note != "" {
			fmt.Fprintf(w, "   (the widest link of the family: %s)\n", c.Chipset.Note)
		}
	}
	for _, h := range b.Model.Hops {
		ss := b.SharersAt(pcie.Address(h.Addr))
		if len(ss) == 0 {
			continue
		}
		var words []string
		take := 0.0
		for _, s := range ss {
			words = append(words, s.Words())
			take += s.Gbps
		}
		fmt.Fprintf(w, "   hop %d is shared with %s: up to %.1f of its %.1f Gb/s when they are busy (not in the ceiling above)\n",
			h.Index, strings.Join(words, ", "), take, h.RawGbps)
	}
}

// addSharers adds to show's budget section the modelled chipset uplink and
// the devices that share the path's hops.
func addSharers(s *showSection, b *budget.Budget) {
	if c := b.Chipset(); c != nil && c.Chipset != nil {
		s.add("Chipset uplink", fmt.Sprintf("%s between the CPU and the %s chipset (%s GT/s x%d, modelled from the datasheet)", c.Chipset.Link, c.Chipset.Chipset, pcie.FormatGTs(c.Speed), c.Width))
	}
	var parts []string
	for _, h := range b.Model.Hops {
		ss := b.SharersAt(pcie.Address(h.Addr))
		if len(ss) == 0 {
			continue
		}
		var words []string
		for _, x := range ss {
			words = append(words, x.Words())
		}
		parts = append(parts, fmt.Sprintf("hop %d: %s", h.Index, strings.Join(words, ", ")))
	}
	s.add("Shared with", strings.Join(parts, "; "))
}
