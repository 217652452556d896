package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

var listCmd = &command{
	name:     "list",
	buffered: true,
	args:     "",
	summary:  "one line per NIC: PCI address, driver, speed, PCIe link, NUMA, queues, name",
	help: `List the network interfaces: physical ones (PCI, USB, other buses) by
default, virtual ones (veth, bridge, lo, ...) too with --all. Columns: interface,
PCI function, netdev driver, Ethernet speed, PCIe link now/max, NUMA node,
rx/tx queues, a note (virtual, emulated, usb, vf, or misidentified: a device
whose identity, speed and PCIe link contradict each other; 'nicdiag check'
says why), and the device's pci.ids name. NICs without a netdev (bound to
vfio-pci, uio_pci_generic or igb_uio for DPDK, or to no driver) follow as rows
with IFACE "-", their PCI driver, and NOTE "no netdev (DRIVER)" or "no
driver"; JSON lists them under "no_netdev".

Examples:
  nicdiag list
  nicdiag list --all --json
  nicdiag --root host.tar.gz list`,
	bind: func(fs *flag.FlagSet) runFunc {
		all := fs.Bool("all", false, "include virtual interfaces")
		return func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) int {
			return runList(ctx, e, fs, args, *all)
		}
	},
}

// runList lists the NICs; all adds the virtual ones.
func runList(ctx context.Context, e *env, fs *flag.FlagSet, args []string, all bool) int {
	if len(args) > 0 {
		return e.usageError("list", fmt.Sprintf("unexpected argument %q", args[0]))
	}
	root, err := e.openRoot(ctx)
	if err != nil {
		return e.fail(err)
	}
	opts := []nicdiag.Option{option.Root(root), nicdiag.WithInventoryOnly()}
	if !all {
		opts = append(opts, nicdiag.WithSoftwareBrief()) // not shown: named only
	}
	h, err := nicdiag.Inspect(ctx, opts...)
	if err != nil {
		return e.fail(err)
	}
	shown := make([]nicinfo.NIC, 0, len(h.NICs))
	var bare []nicinfo.NoNetdevFunction
	for _, n := range h.NICs {
		switch {
		case n.NoNetdev != nil:
			bare = append(bare, *n.NoNetdev)
		case all || n.Physical():
			shown = append(shown, n.NIC)
		}
	}
	for _, u := range h.Unread {
		if u.Part == nicdiag.PartNoNetdev {
			fmt.Fprintf(e.stderr, "nicdiag list: PCI functions without a netdev not listed: %v\n", u.Err)
		}
	}
	ident := make([]finding.Finding, 0, len(h.Identity))
	for _, id := range h.Identity {
		ident = append(ident, id.Finding)
	}
	finding.Sort(ident)
	notes := listNotes(shown, h.Identity)
	if e.json {
		if err := e.writeJSON(struct {
			Schema string            `json:"schema"`
			NICs   []nicinfo.NIC     `json:"nics"`
			Notes  map[string]string `json:"notes,omitempty"`
			// Identity holds nic.misidentified and nic.usb_bus findings.
			Identity []finding.Finding `json:"identity,omitempty"`
			// NoNetdev are the network-class PCI functions without a
			// network interface (vfio-pci, uio, no driver).
			NoNetdev []nicinfo.NoNetdevFunction `json:"no_netdev,omitempty"`
		}{jsonSchema, shown, notes, ident, bare}); err != nil {
			return e.fail(err)
		}
		return exitOK
	}
	if err := renderList(e.stdout, shown, notes, bare); err != nil {
		return e.fail(err)
	}
	return exitOK
}

// listNotes labels each interface that is not a plain physical port:
// "virtual", "emulated", "usb", "vf", or "misidentified" when the identity
// check flags it (details in check and show).
func listNotes(nics []nicinfo.NIC, ident []nicinfo.Identity) map[string]string {
	notes := map[string]string{}
	for _, n := range nics {
		if l := nicinfo.Label(n); l != "" {
			notes[n.Name] = l
		}
	}
	for _, id := range ident {
		if !id.Misidentified {
			continue
		}
		for _, name := range id.Interfaces {
			if slices.ContainsFunc(nics, func(n nicinfo.NIC) bool { return n.Name == name }) {
				notes[name] = "misidentified"
			}
		}
	}
	return notes
}

// renderList writes the list table: the interfaces, then the PCI functions
// without a netdev (IFACE "-", NOTE "no netdev (DRIVER)" or "no driver").
func renderList(w io.Writer, nics []nicinfo.NIC, notes map[string]string, bare []nicinfo.NoNetdevFunction) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "IFACE\tPCI\tDRIVER\tSPEED\tPCIe NOW/MAX\tNUMA\tQUEUES\tNOTE\tNAME")
	for i := range nics {
		n := &nics[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n",
			n.Name, busAddr(n), dash(n.Driver), speedText(n.Link.SpeedMbps), pcieText(n),
			numaText(n.NUMANode), n.Queues.RX, n.Queues.TX, dash(notes[n.Name]), deviceName(n))
	}
	for i := range bare {
		f := &bare[i]
		n := &nicinfo.NIC{PCI: &f.PCIFunction}
		fmt.Fprintf(tw, "-\t%s\t%s\t-\t%s\t%s\t-\t%s\t%s\n",
			f.Address, dash(f.Driver), pcieText(n), numaText(f.NUMANode), f.Note(), deviceName(n))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func busAddr(n *nicinfo.NIC) string {
	switch {
	case n.PCI != nil:
		return string(n.PCI.Address)
	case n.USB != nil:
		return "usb " + n.USB.Path
	}
	return "-"
}

func speedText(mbps int) string {
	if mbps <= 0 {
		return "unknown"
	}
	return strconv.Itoa(mbps) + "Mb/s"
}

func numaText(node int) string {
	if node < 0 {
		return "-"
	}
	return strconv.Itoa(node)
}

func gts(v float64) string {
	return pcie.FormatGTs(v) + "GT/s"
}

// pcieText is "2.5GT/s x1/2.5GT/s x4": the link as trained, then what the
// function is capable of.
func pcieText(n *nicinfo.NIC) string {
	if n.PCI == nil || n.PCI.Link == nil {
		return "-"
	}
	l := n.PCI.Link
	return fmt.Sprintf("%s x%d/%s x%d", gts(l.CurrentSpeed), l.CurrentWidth, gts(l.MaxSpeed), l.MaxWidth)
}

// deviceName is the pci.ids name, the numeric IDs when there is none, or
// the link kind of a virtual interface.
func deviceName(n *nicinfo.NIC) string {
	switch {
	case n.PCI != nil:
		f := n.PCI
		id := fmt.Sprintf("[%04x:%04x]", f.VendorID, f.DeviceID)
		name := strings.TrimSpace(f.VendorName + " " + f.DeviceName)
		if f.DeviceName == "" {
			return strings.TrimSpace(name + " " + id)
		}
		return name
	case n.USB != nil:
		return fmt.Sprintf("USB [%04x:%04x]", n.USB.VendorID, n.USB.ProductID)
	case n.Kind != "":
		return n.Kind
	}
	return "-"
}
