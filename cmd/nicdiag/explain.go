package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/nicdiag/nicdiag/internal/unit"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

// explainFlags are the explain command's own flags.
type explainFlags struct {
	frame     int
	direction string
	ports     int
	speed     float64
}

var explainCmd = &command{
	name:     "explain",
	buffered: true,
	args:     "IFACE|PCI-ADDRESS",
	summary:  "the throughput budget: line rate, PCIe capacity per hop, the ceiling and what sets it",
	help: `Works out how much Ethernet traffic the NIC's PCIe path can carry for a
workload, as a short calculation: the line rate of the ports in use, what each
PCIe hop carries (encoding, DLLP, TLP and per-packet DMA overheads), the
ceiling, the stage that sets it, and the ceiling had every hop trained at what
both of its ends support. A NIC without a netdev (bound to vfio-pci or
another DPDK driver, or to none; 'nicdiag list' shows it) is named by its PCI
address: its budget uses the driver's DMA profile and the chip's top speed.
Rates are Ethernet frame bits per second (header and FCS, no preamble or gap)
in each direction the workload uses, summed over the ports in use.

Directions: rx (the host receives), tx (the host sends), both (every port
receives and sends at once, as a router forwarding both ways), forward
(one-way forwarding: half the ports receive, the other half send).

Examples:
  nicdiag explain enp1s0f0
  nicdiag explain --direction rx --frame-size 64 enp1s0f0
  nicdiag explain --frame-size 64 0000:01:00.1
  nicdiag --root testdata/snapshots/82576-minipcie-x1 explain --json enp1s0f0`,
	bind: func(fs *flag.FlagSet) runFunc {
		f := &explainFlags{}
		fs.IntVar(&f.frame, "frame-size", budget.DefaultFrameBytes, "Ethernet frame `bytes`, header and FCS included")
		fs.StringVar(&f.direction, "direction", string(budget.Both), "rx, tx, both or forward")
		fs.IntVar(&f.ports, "ports", 0, "ports of the card in use (0: every function sharing the narrowest link)")
		fs.Var((*portSpeed)(&f.speed), "port-speed", "line rate of each port: `SPEED` in Mb/s (1000), or with a unit: 100M, 10000M, 2.5G, 25G (0: the negotiated link speed)")
		return func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) int {
			return runExplain(ctx, e, fs, args, *f)
		}
	},
}

// portSpeed is --port-speed: a line rate in Mb/s, written plain (1000) or
// with a unit, M or G, optionally followed by b, bps or b/s, in either case
// (100M, 2.5G, 10000Mbps, 25Gb/s).
type portSpeed float64

func (p *portSpeed) String() string { return strconv.FormatFloat(float64(*p), 'g', -1, 64) }

func (p *portSpeed) Set(s string) error {
	v, err := parsePortSpeed(s)
	if err != nil {
		return err
	}
	*p = portSpeed(v)
	return nil
}

// parsePortSpeed parses a --port-speed value into Mb/s.
func parsePortSpeed(s string) (float64, error) {
	num := strings.TrimSpace(s)
	mult := 1.0
	low := strings.ToLower(num)
	for _, suf := range []string{"b/s", "bps", "b"} {
		if strings.HasSuffix(low, suf) && len(low) > len(suf) && strings.ContainsAny(low[len(low)-len(suf)-1:len(low)-len(suf)], "mg") {
			low = low[:len(low)-len(suf)]
			break
		}
	}
	switch {
	case strings.HasSuffix(low, "g"):
		mult, low = 1000, low[:len(low)-1]
	case strings.HasSuffix(low, "m"):
		low = low[:len(low)-1]
	}
	v, err := strconv.ParseFloat(low, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || strings.ContainsAny(low, "xXpP_") {
		return 0, fmt.Errorf("want a line rate in Mb/s (1000) or with a unit (100M, 2.5G), or 0 for the negotiated link speed")
	}
	return v * mult, nil
}

// explainJSON is the JSON document of `explain --json`.
type explainJSON struct {
	Schema string `json:"schema"`
	*budget.Budget
}

func runExplain(ctx context.Context, e *env, fs *flag.FlagSet, args []string, f explainFlags) int {
	if len(args) != 1 {
		return e.usageError("explain", "need exactly one interface name or PCI address")
	}
	dir, err := budget.ParseDirection(f.direction)
	if err != nil {
		return e.fail(err)
	}
	// 0 means "the default" to the library; on the command line it is a
	// mistake for the frame size, and a negative speed is one always.
	if f.frame <= 0 {
		return e.fail(fmt.Errorf("explain: --frame-size %d: want Ethernet frame bytes, 64 to 16384", f.frame))
	}
	w := budget.Workload{FrameBytes: f.frame, Direction: dir, Ports: f.ports, PortMbps: f.speed}
	root, err := e.openRoot(ctx)
	if err != nil {
		return e.fail(err)
	}
	b, err := nicdiag.Explain(ctx, args[0], w, option.Root(root))
	if err != nil {
		return e.failLookup(ctx, root, args, err)
	}
	if e.json {
		if err := e.writeJSON(explainJSON{Schema: jsonSchema, Budget: b}); err != nil {
			return e.fail(err)
		}
		return exitOK
	}
	renderBudget(e.stdout, b)
	return exitOK
}

// renderBudget writes the budget as a short worked calculation.
func renderBudget(w io.Writer, b *budget.Budget) {
	if b.NoPCIe != "" {
		renderNoPCIe(w, b)
		return
	}
	wl := b.Workload
	if b.Interface == string(b.Address) {
		fmt.Fprintf(w, "PCI function %s (no netdev), DMA profile %s\n", b.Address, b.Profile)
	} else {
		fmt.Fprintf(w, "%s (%s), DMA profile %s\n", b.Interface, b.Address, b.Profile)
	}
	fmt.Fprintf(w, "workload: %d port(s) at %s, %d-byte frames, %s\n\n", wl.Ports, unit.Mbps(wl.PortMbps), wl.FrameBytes, directionWords(wl.Direction))

	fmt.Fprintf(w, "1. Ethernet line rate of the ports in use: %s of frames per direction\n", unit.Mbps(b.EthernetMbps))
	ports := strconv.Itoa(wl.Ports)
	if wl.Direction == budget.Forward { // half the ports receive, half send
		ports += "/2"
	}
	fmt.Fprintf(w, "   (%s × %s × %d/(%d+20) for preamble and inter-frame gap; port speed: %s)\n\n",
		ports, unit.Mbps(wl.PortMbps), wl.FrameBytes, wl.FrameBytes, b.PortSpeedSource)

	renderHops(w, b)

	fmt.Fprintf(w, "3. Ceiling: %s per direction", rangeWords(b.CeilingMbps))
	switch b.Bound {
	case budget.BoundPCIe:
		fmt.Fprintf(w, ", PCIe-bound at the link of %s (%s)", b.LimitingHop, dirWords(b.LimitingDirection))
		if h := b.Hop(b.LimitingHop); h != nil && h.Downgraded {
			fmt.Fprintf(w, ", trained down: it runs at %s where both ends support %s (a riser, the slot's wiring, or a link that retrained lower: pcie.link_downgraded in `nicdiag check`)",
				speedWidth(h.Speed, h.Width), speedWidth(h.CapableSpeed, h.CapableWidth))
		} else if b.LimitedBy != "" {
			fmt.Fprintf(w, ", %s-limited", b.LimitedBy)
			if h := b.Hop(b.LimitingHop); h != nil {
				fmt.Fprint(w, limitedBy(h))
			}
		}
		fmt.Fprintf(w, "\n   the path carries %.0f%% of the line rate\n", 100*b.CeilingMbps.Nominal/b.EthernetMbps)
	case budget.BoundTunnel:
		class := "PCIe"
		if h := b.Hop(b.LimitingHop); h != nil && h.Tunnel != nil {
			class = h.Tunnel.Class
		}
		fmt.Fprintf(w, ", bound by the %s tunnel at %s (%s)\n   the path carries %.0f%% of the line rate\n",
			class, b.LimitingHop, dirWords(b.LimitingDirection), 100*b.CeilingMbps.Nominal/b.EthernetMbps)
	default:
		fmt.Fprintf(w, ", Ethernet-bound: the PCIe path has %.2f× headroom\n", b.PCIeMbps.Nominal/b.EthernetMbps)
	}
	if wl.FrameBytes == 1518 || wl.FrameBytes == 9018 {
		fmt.Fprintf(w, "   about %s of TCP payload (IPv4, TCP timestamps, full-size segments)\n", unit.Mbps(budget.TCPGoodputMbps(b.CeilingMbps.Nominal, wl.FrameBytes)))
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "4. At capability (every hop trained at what both ends support): %s, %s-bound\n",
		rangeWords(b.AtCapabilityMbps), b.AtCapabilityBound)
	fmt.Fprintf(w, "\nassumptions:\n")
	for _, a := range b.Model.Assumptions {
		fmt.Fprintf(w, "  - %s\n", a)
	}
	fmt.Fprintf(w, "  - DMA profile basis: %s\n", b.ProfileBasis)
}

// renderHops writes step 2 of the calculation: what each PCIe hop carries,
// and the hops the model leaves out or takes at a tunnel's figure.
func renderHops(w io.Writer, b *budget.Budget) {
	fmt.Fprintf(w, "2. PCIe, hop by hop (device first), for this traffic:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "   hop\tlink\ttrained\tcapable\traw Gb/s\tports\tcarries Mb/s\tbinds\n")
	for _, h := range b.Model.Hops {
		var ph *pcie.Hop
		for i := range b.Hops {
			if string(b.Hops[i].Upstream.Address) == h.Addr {
				ph = &b.Hops[i]
			}
		}
		link, capable := h.Addr, "?"
		if ph != nil {
			link = string(ph.Upstream.Address) + " → " + string(ph.Downstream.Address)
			capable = speedWidth(ph.CapableSpeed, ph.CapableWidth) + limitedBy(ph)
			if ph.Chipset != nil {
				link, capable = "CPU → chipset ("+ph.Chipset.Link+")", "modelled"
			}
		}
		fmt.Fprintf(tw, "   %d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", h.Index, link, speedWidth(h.GTs, h.Width), capable,
			strconv.FormatFloat(h.RawGbps, 'f', 2, 64), h.Busy, rangeNumbers(h.PCIeMbps), dirWords(h.Dir))
	}
	tw.Flush()
	renderSharers(w, b)
	for _, h := range b.Hops {
		if h.Verdict == pcie.VerdictArchitectural && h.Tunnel == nil {
			fmt.Fprintf(w, "   not modelled: %s → %s: %s\n", h.Upstream.Address, h.Downstream.Address, h.Reason)
		}
		if h.Tunnel != nil {
			fmt.Fprintf(w, "   %s → %s is a %s tunnel: %g Gb/s of PCIe data per direction, not the %s its bridges report (%s)\n",
				h.Upstream.Address, h.Downstream.Address, h.Tunnel.Class, h.Tunnel.Gbps, speedWidth(h.Speed, h.Width), h.Tunnel.Basis)
		}
	}
	fmt.Fprintf(w, "   (MPS %d, MRRS %d, RCB %d; range: pessimistic–optimistic completion chunking, addressing and DLLP spacing)\n\n", b.Model.MPS, b.Model.MRRS, b.Model.RCB)
}

// renderNoPCIe writes the budget of a NIC without a PCIe stage.
func renderNoPCIe(w io.Writer, b *budget.Budget) {
	name := b.Interface
	if b.Address != "" && b.Interface != string(b.Address) {
		name += " (" + string(b.Address) + ")"
	}
	fmt.Fprintf(w, "%s: no PCIe stage to model\n   %s\n\n", name, b.NoPCIe)
	if b.Bound == budget.BoundNone {
		fmt.Fprintf(w, "Ceiling: no physical ceiling known: the link speed is unknown or nominal, so what bounds it is elsewhere (the host's CPU, the hypervisor or the peer); give --port-speed to see a line rate\n")
		return
	}
	wl := b.Workload
	fmt.Fprintf(w, "workload: %d port(s) at %s, %d-byte frames, %s (port speed: %s)\n", wl.Ports, unit.Mbps(wl.PortMbps), wl.FrameBytes, directionWords(wl.Direction), b.PortSpeedSource)
	ports := strconv.Itoa(wl.Ports)
	if wl.Direction == budget.Forward { // half the ports receive, half send
		ports += "/2"
	}
	fmt.Fprintf(w, "Ceiling: %s of frames per direction, Ethernet-bound (%s × %s × %d/(%d+20))\n",
		unit.Mbps(b.EthernetMbps), ports, unit.Mbps(wl.PortMbps), wl.FrameBytes, wl.FrameBytes)
	if wl.FrameBytes == 1518 || wl.FrameBytes == 9018 {
		fmt.Fprintf(w, "   about %s of TCP payload (IPv4, TCP timestamps, full-size segments)\n", unit.Mbps(budget.TCPGoodputMbps(b.EthernetMbps, wl.FrameBytes)))
	}
}

func directionWords(d budget.Direction) string {
	switch d {
	case budget.RX:
		return "host receives (rx)"
	case budget.TX:
		return "host sends (tx)"
	case budget.Forward:
		return "one-way forwarding (half the ports receive, half send)"
	}
	return "both directions at once (forwarding both ways)"
}

func dirWords(d budget.LinkDir) string {
	switch d {
	case budget.Upstream:
		return "device→host"
	case budget.Downstream:
		return "host→device"
	}
	return string(d)
}

func limitedBy(h *pcie.Hop) string {
	var parts []string
	if h.SpeedLimitedBy != "" {
		parts = append(parts, "speed by "+string(h.SpeedLimitedBy))
	}
	if h.WidthLimitedBy != "" {
		parts = append(parts, "width by "+string(h.WidthLimitedBy))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// rangeWords is a rate's range in a sentence: "1435 Mb/s (1390–1470)".
func rangeWords(r budget.Range) string { return unit.MbpsRange(r.Nominal, r.Low, r.High) }

// rangeNumbers is a range of Mb/s in a column that names the unit.
func rangeNumbers(r budget.Range) string {
	if math.Round(r.Low) == math.Round(r.High) {
		return unit.Number(r.Nominal)
	}
	return fmt.Sprintf("%s (%s–%s)", unit.Number(r.Nominal), unit.Number(r.Low), unit.Number(r.High))
}

func speedWidth(gts float64, width int) string {
	if gts <= 0 || width <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%s GT/s x%d", pcie.FormatGTs(gts), width)
}
