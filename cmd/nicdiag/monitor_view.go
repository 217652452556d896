package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
)

// monitorView renders samples: a redrawn screen on a terminal, plain blocks
// otherwise, JSON lines with --json. With a command running it stays quiet
// until the summary, so that the command's own output is not broken up.
type monitorView struct {
	e     *env
	quiet bool
}

func newMonitorView(e *env, commandRuns bool) *monitorView {
	return &monitorView{e: e, quiet: commandRuns}
}

func (v *monitorView) sample(rx monitor.Sample) {
	if v.quiet {
		return
	}
	if v.e.json {
		_ = monitor.NewWriter(v.e.stdout).WriteRunSample(rx)
		return
	}
	x := rx.Sample
	var b strings.Builder
	if v.e.tty {
		b.WriteString("\x1b[H\x1b[2J") // home, clear: redraw like top
		fmt.Fprintf(&b, "nicdiag monitor — %s, every %.1fs (Ctrl-C ends)\n\n", x.Time.Format("15:04:05"), x.IntervalS)
	} else {
		fmt.Fprintf(&b, "sample %s interval %.2fs\n", x.Time.Format(time.RFC3339), x.IntervalS)
	}
	renderSample(&b, x)
	if !v.e.tty {
		b.WriteString("\n")
	}
	_, _ = io.WriteString(v.e.stdout, b.String())
}

// renderSample writes the per-CPU and per-NIC tables.
func renderSample(w io.Writer, x irq.Sample) {
	fmt.Fprintf(w, "%4s %6s %6s %6s %10s %10s %10s %10s %9s %9s\n",
		"CPU", "busy%", "irq%", "sirq%", "NET_RX/s", "NET_TX/s", "nicIRQ/s", "backlog/s", "drop/s", "squeez/s")
	for _, c := range x.CPUs {
		irqPct := "-"
		if c.IRQPct != nil {
			irqPct = fmt.Sprintf("%.1f", *c.IRQPct)
		}
		fmt.Fprintf(w, "%4d %6.1f %6s %6.1f %10.0f %10.0f %10.0f %10.0f %9.0f %9.0f\n",
			c.CPU, c.BusyPct, irqPct, c.SoftIRQPct, c.NetRXPerS, c.NetTXPerS, c.NICIRQsPerS,
			c.SoftnetProcessedPerS, c.SoftnetDroppedPerS, c.SoftnetSqueezedPerS)
	}
	if !x.IRQTimeAccounted {
		fmt.Fprintln(w, "irq% -: hard-IRQ time is not accounted by this kernel")
	}
	if len(x.NICs) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-12s %10s %10s %9s %9s %9s  %s\n", "NIC", "rx pkt/s", "tx pkt/s", "rx Mb/s", "tx Mb/s", "irq/s", "queues (kind-n@cpu irq/s)")
	for _, n := range x.NICs {
		var qs []string
		traffic := false
		for _, q := range n.Queues {
			traffic = traffic || q.HasTraffic()
			if q.Kind == irq.KindOther && q.IRQsPerS == 0 {
				continue
			}
			qs = append(qs, fmt.Sprintf("%s %.0f", queueLabel(q), q.IRQsPerS))
		}
		fmt.Fprintf(w, "%-12s %10.0f %10.0f %9.1f %9.1f %9.0f  %s\n", n.Name, n.RXPacketsPerS, n.TXPacketsPerS,
			n.RXBytesPerS*8/1e6, n.TXBytesPerS*8/1e6, n.IRQsPerS, strings.Join(qs, " "))
		if n.StatsError != "" {
			fmt.Fprintf(w, "%-12s (packet counters: %s)\n", "", n.StatsError)
		}
		if n.QueueStatsError != "" {
			fmt.Fprintf(w, "%-12s (per-queue counters: %s)\n", "", n.QueueStatsError)
		}
		if !traffic {
			continue
		}
		// The queues whose driver counts their traffic, under the NIC's
		// columns; "-" where the driver has no such counter.
		for _, q := range n.Queues {
			if !q.HasTraffic() {
				continue
			}
			fmt.Fprintf(w, "  %-10s %10s %10s %9s %9s %9.0f\n", queueLabel(q),
				optRate(q.RXPacketsPerS, 1, "%.0f"), optRate(q.TXPacketsPerS, 1, "%.0f"),
				optRate(q.RXBytesPerS, 8/1e6, "%.1f"), optRate(q.TXBytesPerS, 8/1e6, "%.1f"), q.IRQsPerS)
		}
	}
}

// queueLabel names a vector as kind-n@cpu: the CPU that took most of its
// interrupts, else where it is routed.
func queueLabel(q irq.QueueRate) string {
	cpu := "-"
	if q.CPU >= 0 {
		cpu = fmt.Sprint(q.CPU)
	} else if len(q.EffectiveCPUs) > 0 {
		cpu = irq.FormatCPUList(q.EffectiveCPUs)
	}
	name := string(q.Kind)
	if q.Index >= 0 {
		name = fmt.Sprintf("%s-%d", q.Kind, q.Index)
	}
	return name + "@" + cpu
}

// optRate formats *p×scale, or "-" when p is nil.
func optRate(p *float64, scale float64, format string) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf(format, *p*scale)
}

// summary prints the verdict.
func (v *monitorView) summary(r *monitor.Result) {
	if v.e.json {
		_ = monitor.NewWriter(v.e.stdout).WriteSummary(r)
		return
	}
	s := r.Summary
	var b strings.Builder
	if v.e.tty && !v.quiet {
		b.WriteString("\n")
	}
	plural := "s"
	if s.Samples == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "nicdiag monitor: %d sample%s over %.1fs", s.Samples, plural, s.Seconds)
	if c := r.Command; c != nil && c.Signal != 0 {
		fmt.Fprintf(&b, "; %s was killed by signal %d (%s)", strings.Join(c.Argv, " "), int(c.Signal), c.Signal)
	} else if c != nil {
		fmt.Fprintf(&b, "; %s exited with status %d", strings.Join(c.Argv, " "), c.ExitCode)
	}
	if r.Interrupted {
		b.WriteString(" (interrupted)")
	}
	b.WriteString("\n")
	if s.Samples > 0 {
		b.WriteString("window averages:\n")
		renderSample(&b, irq.Sample{IntervalS: s.Seconds, IRQTimeAccounted: s.IRQTimeAccounted, CPUs: s.CPUs, NICs: s.NICs})
	}
	renderRunVerdict(&b, r.Verdict)
	b.WriteString("\nverdict:\n")
	if len(s.Findings) == 0 {
		b.WriteString("  no core was bound by packet work, and no softnet drops or squeezes\n")
	}
	for _, f := range s.Findings {
		fmt.Fprintf(&b, "  %s\n", f)
		if f.Fix != "" {
			fmt.Fprintf(&b, "      fix: %s\n", f.Fix)
		}
	}
	_, _ = io.WriteString(v.e.stdout, b.String())
}

// renderRunVerdict writes the run verdict's bound and its ceilings, nearest
// first; nothing for a run with no traffic.
func renderRunVerdict(w io.Writer, v monitor.Verdict) {
	if v.Bound == "" || len(v.Traffic) == 0 {
		return
	}
	fmt.Fprintf(w, "\nrun: %s", v.Bound)
	if v.Share != nil && v.Limit != nil {
		fmt.Fprintf(w, " (%s of the %s ceiling)", monitor.FormatShare(*v.Share), v.Limit.Layer)
	}
	fmt.Fprintf(w, " over %d of %d samples with traffic (%.1f s; peak %s)\n", v.ActiveSamples, v.Samples, v.ActiveSeconds, monitor.FormatMbps(v.PeakMbps))
	renderWatched(w, v.Watched)
	if st := v.Stack; st != nil {
		fmt.Fprintf(w, "  stack: %s\n", stackLayers(st))
	}
	if len(v.Ceilings) == 0 {
		return
	}
	fmt.Fprintf(w, "  %-9s %11s %11s %6s  %s\n", "LAYER", "ACHIEVED", "CEILING", "SHARE", "WHAT")
	for i, c := range v.Ceilings {
		if i == 6 {
			fmt.Fprintf(w, "  (%d more in --json)\n", len(v.Ceilings)-i)
			break
		}
		fmt.Fprintf(w, "  %-9s %11s %11s %6s  %s\n", c.Layer, monitor.FormatMbps(c.AchievedMbps), monitor.FormatMbps(c.CeilingMbps), monitor.FormatShare(c.Share), c.What)
	}
}

// renderWatched says which interfaces the verdict judged and why, and
// which it sampled without judging.
func renderWatched(w io.Writer, ws []monitor.Watched) {
	var judged, not []string
	for _, x := range ws {
		s := x.NIC
		switch x.Why {
		case monitor.WhyRouted:
			s += " (the command's flows leave by it)"
		case monitor.WhyNoPhysical:
			s += " (no physical NIC here)"
		}
		if x.Judged {
			judged = append(judged, s)
		} else {
			not = append(not, s)
		}
	}
	if len(judged) > 0 {
		fmt.Fprintf(w, "  judged: %s\n", strings.Join(judged, ", "))
	}
	if len(not) > 0 && len(not) <= 8 {
		fmt.Fprintf(w, "  also sampled, not judged (no traffic worth judging, or software interfaces beside a NIC that moved it): %s\n", strings.Join(not, ", "))
	}
}
