package irq

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// CheckQueues returns the static verdicts on one NIC from facts already
// read: its queue map nq (from MapQueues), its receive steering st and the
// parsed /proc/interrupts x (nil when unreadable: then only
// nic.single_queue is judged, and it is not raised on a one-CPU host).
func CheckQueues(n nicinfo.NIC, nq NICQueues, st Steering, x *Interrupts) []finding.Finding {
	var out []finding.Finding
	ncpu := 0 // unknown without /proc/interrupts
	if x != nil {
		ncpu = len(x.CPUs)
		if f, ok := concentrated(nq, ncpu); ok {
			out = append(out, f)
		}
	}
	if f, ok := singleQueue(n, nq, st); ok && ncpu != 1 {
		out = append(out, f)
	}
	return out
}

// concentrated reports a NIC with two or more receive vectors (rx or txrx)
// all landing on the same single CPU of a host that has more. A single-queue
// NIC's rx and tx pair is nic.single_queue's business, not this one's.
func concentrated(nq NICQueues, ncpu int) (finding.Finding, bool) {
	var data []QueueIRQ
	for _, q := range nq.DataQueues() {
		if q.Kind != KindTX {
			data = append(data, q)
		}
	}
	if len(data) < 2 || ncpu < 2 {
		return finding.Finding{}, false
	}
	cpu, src := -1, ""
	var irqs []string
	for _, q := range data {
		if len(q.CPUs) != 1 || (cpu >= 0 && q.CPUs[0] != cpu) {
			return finding.Finding{}, false
		}
		cpu, src = q.CPUs[0], q.CPUSource
		irqs = append(irqs, fmt.Sprintf("%d (%s)", q.IRQ, q.Action))
	}
	return finding.Finding{
		Code:     finding.IRQAffinityConcentrate,
		Severity: finding.Warn,
		Subject:  nq.NIC,
		Summary: fmt.Sprintf("all %d receive-queue interrupts of %s land on CPU %d, so one core does the work of every queue",
			len(data), nq.NIC, cpu),
		Fix: "spread the IRQs over cores (irqbalance, or write /proc/irq/N/smp_affinity_list per queue)",
		Evidence: map[string]string{
			"cpu": strconv.Itoa(cpu), "source": src, "irqs": strings.Join(irqs, ", "),
			"host_cpus": strconv.Itoa(ncpu),
		},
	}, true
}

// singleQueue reports a NIC that receives on one queue without RPS.
func singleQueue(n nicinfo.NIC, nq NICQueues, st Steering) (finding.Finding, bool) {
	if n.Queues.RX == 0 && n.Queues.Channels == nil {
		return finding.Finding{}, false // queues/ unreadable and no channels: the count is unknown
	}
	rx := n.Queues.RX
	if c := n.Queues.Channels; c != nil && c.RX+c.Combined > rx {
		rx = c.RX + c.Combined
	}
	vec := 0
	for _, q := range nq.DataQueues() {
		if q.Kind != KindTX {
			vec++
		}
	}
	if vec > rx {
		rx = vec
	}
	if rx != 1 || n.Queues.RPS || st.RPSOn() {
		return finding.Finding{}, false
	}
	sev := finding.Warn
	if n.Link.SpeedMbps > 0 && n.Link.SpeedMbps < 1000 {
		sev = finding.Info // under 1 Gb/s one core keeps up
	}
	ev := map[string]string{"rx_queues": strconv.Itoa(n.Queues.RX), "rps": "off"}
	if c := n.Queues.Channels; c != nil {
		ev["channels"] = fmt.Sprintf("rx %d combined %d (max rx %d combined %d)", c.RX, c.Combined, c.MaxRX, c.MaxCombined)
	}
	fix := "enable RPS (echo a CPU mask > /sys/class/net/" + n.Name + "/queues/rx-0/rps_cpus)"
	if c := n.Queues.Channels; c != nil && c.MaxCombined+c.MaxRX > 1 {
		fix = fmt.Sprintf("raise the queue count (ethtool -L %s combined %d) or enable RPS", n.Name, max(c.MaxCombined, c.MaxRX))
	}
	for _, q := range nq.DataQueues() {
		ev["irq"] = fmt.Sprintf("%d (%s) on CPU %s", q.IRQ, q.Action, FormatCPUList(q.CPUs))
		break
	}
	return finding.Finding{
		Code:     finding.NICSingleQueue,
		Severity: sev,
		Subject:  n.Name,
		Summary:  n.Name + " has one receive queue and no RPS: one core handles every received packet",
		Fix:      fix,
		Evidence: ev,
	}, true
}
