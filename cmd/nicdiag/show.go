package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

var showCmd = &command{
	name:     "show",
	buffered: true,
	args:     "IFACE",
	summary:  "everything known about one NIC",
	help: `Show everything nicdiag knows about one interface, grouped like ethtool
output: identity (PCI IDs and names), driver, firmware and offloads,
Ethernet link and modes (partner, pause, EEE, carrier changes), queues,
rings and coalescing, IRQs, NUMA placement, PCIe link and IOMMU, SR-IOV and
VF settings, what could not be read (and why), drop counters since boot,
pause frames and cloud allowances since boot, XDP and tunnel setup; then
the PCIe path hop by hop to the root port (the modelled chipset uplink and
the devices sharing each hop), the throughput budget of the default
workload, where each queue's IRQ lands, the host (VM or not, forwarding,
the IRQ CPUs' frequency scaling and idle states, connection tracking,
bridge netfilter, kernel), and the findings about this NIC. Exit code as
for check.

Examples:
  nicdiag show eth0
  nicdiag --root host.tar.gz show enp1s0f0 --json`,
	bind: noFlags(runShow),
}

func runShow(ctx context.Context, e *env, fs *flag.FlagSet, args []string) int {
	if len(args) != 1 {
		return e.usageError("show", "need exactly one interface name")
	}
	root, err := e.openRoot(ctx)
	if err != nil {
		return e.fail(err)
	}
	r, err := nicdiag.Check(ctx, option.Root(root), nicdiag.WithInterfaces(args[0]))
	if err != nil {
		return e.failLookup(ctx, root, args, err)
	}
	sel := r.Host.Selected[0]
	if !sel.Netdev() {
		return e.fail(fmt.Errorf("%s has no network interface; 'nicdiag explain %s' and 'nicdiag check %s' take it", args[0], args[0], args[0]))
	}
	n, path, queues := &sel.NIC, sel.Path, sel.Queues
	if e.json {
		doc := showJSON{Schema: jsonSchema, NIC: n, Path: path, Budget: sel.Budget, Queues: queues, Findings: r.Findings,
			LossTotals: sel.LossTotals, LinkErrors: sel.LinkErrors, HostFacts: &r.Host.Facts}
		if err := e.writeJSON(doc); err != nil {
			return e.fail(err)
		}
		return exitFor(r.Findings)
	}
	nameEnds(path, root)
	ps := pathSection(path)
	switch l := nicinfo.Label(*n); {
	case n.PCI != nil && l == nicinfo.LabelVirtual:
		ps.add("Judged", "no: a virtual NIC's PCIe link is emulated and its speed nominal")
	case n.PCI != nil && l == nicinfo.LabelEmulated:
		ps.add("Judged", "no: an emulated NIC's PCIe link is emulated and its speed nominal")
	}
	secs := inventorySections(n)
	for i := range secs {
		if secs[i].Title == "PCIe" {
			secs[i].add("IOMMU", iommuText(sel))
		}
	}
	secs = append(secs, dropSection(sel), healthSection(sel), linkHealthSection(sel), overlaySection(n), ps, budgetSection(sel.Budget), queueSection(queues), hostSection(r.Host, queues), hostAuditSection(r.Host, queues), findingSection(r.Findings))
	if err := renderSections(e.stdout, secs); err != nil {
		return e.fail(err)
	}
	return exitFor(r.Findings)
}

// showJSON is the JSON document of `show --json`.
type showJSON struct {
	Schema   string            `json:"schema"`
	NIC      *nicinfo.NIC      `json:"nic"`
	Path     *pcie.Path        `json:"pcie_path,omitempty"`
	Budget   *budget.Budget    `json:"budget,omitempty"`
	Queues   *irq.NICQueues    `json:"queues,omitempty"`
	Findings []finding.Finding `json:"findings"`
	// LossTotals are its receive, loss and pause counters since boot.
	LossTotals *irq.LossTotals `json:"loss_totals,omitempty"`
	// LinkErrors are its damaged-frame counters since boot.
	LinkErrors *nicinfo.LinkErrors `json:"link_errors,omitempty"`
	// HostFacts are the host's idle states, connection tracking and bridge
	// netfilter.
	HostFacts *nicdiag.HostFacts `json:"host_facts,omitempty"`
}

// showSection is one titled block of `show` text. Rows are key/value
// pairs; Body, when set, writes free text after them (a hop table, a list
// of findings).
type showSection struct {
	Title string
	Rows  [][2]string
	Body  func(w io.Writer) error
}

func (s *showSection) add(k, v string) {
	if v != "" {
		s.Rows = append(s.Rows, [2]string{k, v})
	}
}

// renderShow writes the inventory sections for n, then extra ones.
func renderShow(w io.Writer, n *nicinfo.NIC, extra ...showSection) error {
	return renderSections(w, append(inventorySections(n), extra...))
}

// renderSections writes the sections that have rows or a body.
func renderSections(w io.Writer, secs []showSection) error {
	for i, s := range secs {
		if len(s.Rows) == 0 && s.Body == nil {
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s:\n", s.Title)
		tw := tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
		for _, r := range s.Rows {
			fmt.Fprintf(tw, "\t%s:\t%s\n", r[0], r[1])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if s.Body != nil {
			if err := s.Body(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// inventorySections are the inventory parts of show: what nicinfo knows.
func inventorySections(n *nicinfo.NIC) []showSection {
	irq, numa, pcie, sriov := placementSections(n)
	miss := showSection{Title: "Not available"}
	for _, m := range n.Missing {
		k, v, _ := strings.Cut(m, ": ")
		miss.add(k, v)
	}
	warn := showSection{Title: "Warnings"}
	for i, m := range n.Warnings {
		warn.add(strconv.Itoa(i+1), m)
	}
	return []showSection{identitySection(n), driverSection(n), linkSection(n), queueCountSection(n), irq, numa, pcie, sriov, miss, warn}
}

// identitySection is who the NIC is: names, addresses, bus and IDs.
func identitySection(n *nicinfo.NIC) showSection {
	id := showSection{Title: "Identity"}
	id.add("Interface", n.Name)
	id.add("Index", strconv.Itoa(n.Index))
	id.add("MAC", n.MAC)
	if n.PermMAC != n.MAC {
		id.add("Permanent MAC", n.PermMAC)
	}
	id.add("State", string(n.OperState))
	if n.MTU > 0 {
		id.add("MTU", strconv.Itoa(n.MTU))
	}
	id.add("Bus", string(n.Bus))
	id.add("Kind", n.Kind)
	id.add("Bridge", text.Clip(n.Bridge))
	if f := n.PCI; f != nil {
		id.add("PCI function", string(f.Address))
		id.add("Vendor", named(f.VendorName, f.VendorID))
		id.add("Device", named(f.DeviceName, f.DeviceID))
		id.add("Subsystem", strings.TrimSpace(fmt.Sprintf("%s [%04x:%04x]", f.SubsystemName, f.SubsystemVendor, f.SubsystemDevice)))
		id.add("Class", strings.TrimSpace(fmt.Sprintf("%s [%06x]", f.ClassName, f.Class)))
		id.add("Revision", fmt.Sprintf("%02x", f.Revision))
	}
	if u := n.USB; u != nil {
		id.add("USB device", fmt.Sprintf("%s [%04x:%04x]", u.Path, u.VendorID, u.ProductID))
		if u.SpeedMbps > 0 {
			id.add("USB speed", strconv.Itoa(u.SpeedMbps)+"Mb/s")
		}
	}
	return id
}

// driverSection is the driver and firmware.
func driverSection(n *nicinfo.NIC) showSection {
	drv := showSection{Title: "Driver"}
	drv.add("Driver", n.Driver)
	drv.add("Version", n.DriverVersion)
	drv.add("Firmware", n.FirmwareVersion)
	drv.add("Bus info", n.BusInfo)
	if n.PCI != nil {
		drv.add("PCI driver", n.PCI.Driver)
	}
	if n.USB != nil {
		drv.add("USB driver", n.USB.Driver)
	}
	drv.add("Offloads", offloadsText(n.Features))
	return drv
}

// linkSection is the Ethernet link and its modes.
func linkSection(n *nicinfo.NIC) showSection {
	link := showSection{Title: "Link"}
	link.add("Speed", speedText(n.Link.SpeedMbps))
	link.add("Duplex", string(n.Link.Duplex))
	if n.Link.Autoneg != nil {
		link.add("Auto-negotiation", onOff(*n.Link.Autoneg))
	}
	link.add("Port", n.Link.Port)
	link.add("Supported modes", strings.Join(n.Link.Supported, " "))
	link.add("Advertised modes", strings.Join(n.Link.Advertised, " "))
	link.add("Partner modes", text.Clean(strings.Join(n.Link.PartnerAdvertised, " ")))
	link.add("Not measured", strings.Join(n.Link.Nominal, "; "))
	link.add("Pause", pauseText(n.Pause))
	link.add("EEE", eeeText(n))
	link.add("Carrier", carrierText(n.Carrier))
	return link
}

// queueCountSection is the queue and channel counts and RPS.
func queueCountSection(n *nicinfo.NIC) showSection {
	q := showSection{Title: "Queues"}
	q.add("RX queues", strconv.Itoa(n.Queues.RX))
	q.add("TX queues", strconv.Itoa(n.Queues.TX))
	if c := n.Queues.Channels; c != nil {
		q.add("Channels", fmt.Sprintf("rx %d tx %d other %d combined %d (max rx %d tx %d other %d combined %d)",
			c.RX, c.TX, c.Other, c.Combined, c.MaxRX, c.MaxTX, c.MaxOther, c.MaxCombined))
	}
	q.add("RPS", onOff(n.Queues.RPS))
	q.add("Virtio", virtioText(n.Virtio))
	q.add("Rings", ringsText(n.Rings))
	q.add("Coalescing", coalesceText(n.Coalesce))
	return q
}

// placementSections are where the PCI function sits: its IRQs, NUMA node,
// PCIe link and SR-IOV relations (empty for a NIC off PCI).
func placementSections(n *nicinfo.NIC) (irq, numa, pcie, sriov showSection) {
	irq = showSection{Title: "IRQs"}
	numa = showSection{Title: "NUMA"}
	pcie = showSection{Title: "PCIe"}
	sriov = showSection{Title: "SR-IOV"}
	if f := n.PCI; f != nil {
		irq.add("IRQs", intList(f.IRQs))
		numa.add("Node", numaText(n.NUMANode))
		numa.add("Local CPUs", n.LocalCPUs)
		if l := f.Link; l != nil {
			pcie.add("Link now", fmt.Sprintf("%s x%d", gts(l.CurrentSpeed), l.CurrentWidth))
			pcie.add("Link max", fmt.Sprintf("%s x%d", gts(l.MaxSpeed), l.MaxWidth))
		}
		sriov.add("Physical function", string(f.PhysFn))
		sriov.add("Virtual functions", text.Join(f.VFs, " "))
		if f.TotalVFs > 0 {
			sriov.add("Total VFs", strconv.Itoa(f.TotalVFs))
		}
		for _, v := range n.VFConfig {
			sriov.add("VF "+strconv.Itoa(v.VF), vfText(v))
		}
	}
	return irq, numa, pcie, sriov
}

func named(name string, id uint16) string {
	if name == "" {
		return fmt.Sprintf("[%04x]", id)
	}
	return fmt.Sprintf("%s [%04x]", name, id)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func intList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}
