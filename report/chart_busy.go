package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/monitor"
)

// busyPart is one kind of a CPU's time in the busy chart.
type busyPart struct {
	name, color string
}

// The busy chart's parts, in the order they are stacked: the run's packet
// work first, then its threads' user and system time, then what was not
// the run's. Okabe and Ito's colours, told apart in greyscale too.
var busyParts = []busyPart{
	{"irq+softirq", "#d55e00"},
	{"system", "#0072b2"},
	{"user", "#56b4e9"},
	{"other work (processes not the run's)", "#999999"},
	{"steal (the hypervisor's)", "#e69f00"},
}

// busyShares splits a CPU's mean load into busyParts, in percent of the
// CPU: the other processes' time (the stack's scans) comes out of user
// and system in proportion.
func busyShares(c monitor.CPULoad) [5]float64 {
	user, system := max(c.UserPct, 0), max(c.SystemPct, 0)
	other := 0.0
	if c.OtherPct != nil && user+system > 0 {
		other = min(max(*c.OtherPct, 0), user+system)
		keep := (user + system - other) / (user + system)
		user, system = user*keep, system*keep
	}
	s := [5]float64{max(c.PacketPct, 0), system, user, other, max(c.StealPct, 0)}
	// Rounding in the record can put the sum past 100: scale it back.
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	if sum > 100 {
		for i := range s {
			s[i] *= 100 / sum
		}
	}
	return s
}

// boundCPU is the CPU the verdict names: its limit's, or that of the
// other work that bound it; -1 for none.
func boundCPU(vd *monitor.Verdict) int {
	if vd.Limit != nil && vd.Limit.CPU != nil {
		return *vd.Limit.CPU
	}
	if c := vd.Cause; c != nil && c.Layer == "other_work" {
		if n, ok := strings.CutPrefix(c.Subject, "CPU "); ok {
			if id, err := strconv.Atoi(n); err == nil {
				return id
			}
		}
	}
	return -1
}

// busyChart is each CPU's busy time over the run's span, a bar split by
// what took it, beside the verdict's evidence: what the verdict on a core,
// the command or other work rests on. ok is false where the verdict has
// no CPU load.
func busyChart(vd *monitor.Verdict) (chart, bool) {
	if len(vd.CPUs) == 0 {
		return chart{}, false
	}
	const title = "How busy each CPU was over the run's span, and with what"
	d := &svgDoc{}
	d.text(plotX-180, 20, "start", "t", title)
	rh := rowHeight(len(vd.CPUs))
	every := 1
	if rh < 10 {
		every = (10 + rh - 1) / rh
	}
	hot := boundCPU(vd)
	scanned := false
	d.printf(`<g class="busy" shape-rendering="crispEdges" data-x="%d" data-y="%d" data-row-height="%d">`+"\n", plotX, plotTop, rh)
	for r, c := range vd.CPUs {
		scanned = scanned || c.OtherPct != nil
		y := plotTop + r*rh
		x := float64(plotX)
		shares := busyShares(c)
		var tip []string
		for i, v := range shares {
			w := plotW * v / 100
			if w > 0 {
				d.printf(`<rect class="part-%d" x="%s" y="%d" width="%s" height="%d" fill="%s"/>`+"\n", i, num(x), y, num(w), max(rh-1, 1), busyParts[i].color)
			}
			x += w
			tip = append(tip, fmt.Sprintf("%s %.0f %%", strings.SplitN(busyParts[i].name, " (", 2)[0], v))
		}
		d.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="none"><title>%s</title></rect>`+"\n", plotX, y, plotW, rh,
			esc(fmt.Sprintf("CPU %d: %s", c.CPU, strings.Join(tip, ", "))))
		label := fmt.Sprintf("CPU %d", c.CPU)
		if r%every == 0 || c.CPU == hot {
			class := "s"
			if c.CPU == hot {
				class, label = "t", label+" ▶"
			}
			d.text(plotX-6, float64(y)+float64(rh)/2+4, "end", class, label)
			d.text(sideX, float64(y)+float64(rh)/2+4, "start", "s", fmt.Sprintf("%.0f %%", min(c.BusyPct+c.StealPct, 100)))
		}
	}
	d.printf("</g>\n")
	bottom := float64(plotTop + len(vd.CPUs)*rh)
	d.printf(`<rect x="%d" y="%d" width="%d" height="%s" fill="none" stroke="#444"/>`+"\n", plotX, plotTop, plotW, num(bottom-plotTop))
	for _, p := range []int{0, 25, 50, 75, 100} {
		x := float64(plotX + plotW*p/100)
		d.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#444"/>`+"\n", num(x), num(bottom), num(x), num(bottom+4))
		d.text(x, bottom+15, "middle", "a", strconv.Itoa(p)+" %")
	}
	d.text(plotX+plotW/2, bottom+29, "middle", "a", "share of the CPU's time")
	ly := bottom + 44
	lx := float64(plotX - 180)
	for _, p := range busyParts {
		if !scanned && strings.HasPrefix(p.name, "other") {
			continue
		}
		d.printf(`<rect x="%s" y="%s" width="12" height="10" fill="%s"/>`+"\n", num(lx), num(ly-9), p.color)
		d.text(lx+16, ly, "start", "s", p.name)
		lx += 16 + 6.2*float64(len(p.name)) + 14
	}
	ny := ly + 22
	for _, l := range busyEvidence(vd, hot, scanned) {
		for _, w := range wrapText(l, noteChars) {
			d.text(plotX-180, ny, "start", "m", w)
			ny += 15
		}
	}
	d.h = int(ny)
	caption := "Each bar is a CPU's mean time over the run's span: irq+softirq (the run's packet work), system and user time, " +
		"the time of processes that are not the run's (from the process scans of this host's stack), and steal (time the hypervisor gave to others); " +
		"the rest is idle. ▶ marks the CPU the verdict names. A core bound by packet work is mostly irq+softirq; one mostly grey or yellow was busy with other work."
	if !scanned {
		caption += " The process table was not scanned (no stack in the record, or no scan in the run): other processes' time is inside user and system."
	}
	return chart{ID: "busy", Title: title, SVG: d.wrap("bars-busy", title), Caption: caption}, true
}

// busyEvidence is the verdict's evidence written beside the busy chart:
// what the CPU it names was busy with and why it bound the run.
func busyEvidence(vd *monitor.Verdict, hot int, scanned bool) []string {
	out := []string{fmt.Sprintf("Verdict: %s.", vd.Bound)}
	if c := vd.Cause; c != nil {
		out = append(out, c.Summary)
		out = append(out, c.Evidence...)
	}
	for _, c := range vd.CPUs {
		if c.CPU != hot {
			continue
		}
		s := busyShares(c)
		line := fmt.Sprintf("CPU %d: %.0f %% irq+softirq, %.0f %% system, %.0f %% user", c.CPU, s[0], s[1], s[2])
		if scanned {
			line += fmt.Sprintf(", %.0f %% other processes", s[3])
		}
		line += fmt.Sprintf(", %.0f %% steal", s[4])
		if len(c.Other) > 0 {
			var names []string
			for _, p := range c.Other {
				names = append(names, fmt.Sprintf("%s (PID %d) %.0f %%", p.Comm, p.PID, p.Pct))
			}
			line += "; busiest other processes: " + strings.Join(names, ", ")
		}
		out = append(out, line)
	}
	if vd.Limit != nil && vd.Cause == nil {
		out = append(out, fmt.Sprintf("Ceiling reached: %s, %s of it.", vd.Limit.What, monitor.FormatShare(vd.Limit.Share)))
	}
	return out
}
