package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/irq"
)

// healthSection is what held the NIC's traffic back or damaged it since
// its driver started counting: pause frames both ways and a cloud NIC's
// allowance counters.
func healthSection(n *nicdiag.NIC) showSection {
	s := showSection{Title: "Throttled (since the driver started counting, usually boot)"}
	t := n.LossTotals
	if t == nil {
		return s
	}
	var rx, tx uint64
	var pause bool
	var allow []string
	for _, l := range t.Losses {
		switch l.Class {
		case irq.LossPauseRX:
			rx, pause = rx+l.Value, true
		case irq.LossPauseTX:
			tx, pause = tx+l.Value, true
		case irq.LossAllowance:
			allow = append(allow, text.Clip(strings.TrimPrefix(l.Name, "ethtool:"))+" "+strconv.FormatUint(l.Value, 10))
		}
	}
	if pause {
		s.add("Pause frames", fmt.Sprintf("received %d (the partner stopped this host), sent %d (this host stopped the partner); frames sent %d, received %d", rx, tx, t.TXPackets, t.RXPackets))
	}
	s.add("Allowances", strings.Join(allow, ", "))
	return s
}
