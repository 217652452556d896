package nicdiag

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// localityCheck: queue IRQs of a NIC on a multi-node host that land only on
// CPUs of another NUMA node than the NIC's (irq.numa_remote). The NIC DMAs
// into its own node's memory, so each packet on such a queue is handled
// across the socket interconnect. Warn when at least half of the NIC's
// data queues are remote, info when fewer are.
var localityCheck = Checker{
	Name:  "locality",
	Codes: []finding.Code{finding.IRQNUMARemote},
	Run:   func(h *Host) []finding.Finding { return perNIC(h, h.remoteQueues) },
}

func (h *Host) remoteQueues(n *NIC) (finding.Finding, bool) {
	if !n.Netdev() || n.Queues == nil || h.Interrupts == nil || n.NUMANode < 0 {
		return finding.Finding{}, false
	}
	local, err := irq.ParseCPUList(n.LocalCPUs)
	if err != nil || len(local) == 0 || len(local) >= len(h.Interrupts.CPUs) {
		return finding.Finding{}, false // unknown, or one node: nothing is remote
	}
	data := n.Queues.DataQueues()
	var remote []string
	for _, q := range data {
		if len(q.CPUs) > 0 && !slices.ContainsFunc(q.CPUs, func(c int) bool { return slices.Contains(local, c) }) {
			remote = append(remote, fmt.Sprintf("%d (%s) on CPU %s", q.IRQ, q.Action, irq.FormatCPUList(q.CPUs)))
		}
	}
	if len(remote) == 0 {
		return finding.Finding{}, false
	}
	sev := finding.Info
	if 2*len(remote) >= len(data) {
		sev = finding.Warn
	}
	cpus := irq.FormatCPUList(local)
	return finding.Finding{
		Code:     finding.IRQNUMARemote,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%d of %s's %d queue interrupts land only on CPUs outside its NUMA node %d (CPUs %s): the packets of those queues are DMAed into node %d's memory and handled across the socket interconnect",
			len(remote), n.Name, len(data), n.NUMANode, cpus, n.NUMANode),
		Fix: fmt.Sprintf("Keep the NIC's IRQs on its own node: echo %s > /proc/irq/N/smp_affinity_list for each listed IRQ (or irqbalance, which honours the node), and run the application there too (numactl --cpunodebind=%d).",
			cpus, n.NUMANode),
		Evidence: map[string]string{
			"numa_node":    strconv.Itoa(n.NUMANode),
			"local_cpus":   cpus,
			"host_cpus":    strconv.Itoa(len(h.Interrupts.CPUs)),
			"data_queues":  strconv.Itoa(len(data)),
			"remote_irqs":  strings.Join(remote, ", "),
			"remote_count": strconv.Itoa(len(remote)),
		},
	}, true
}
