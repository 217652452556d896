// Package report draws a monitored run (what `nicdiag monitor --record`
// writes) as pictures: a self-contained HTML page, or the charts alone as
// one SVG document.
//
// The page opens with the run verdict (monitor.Verdict: the layer that
// bound the run, every ceiling at the run's own mix, each NIC's traffic,
// this host's stack), a chart of the throughput over time against each
// ceiling (a CPU's as a bar of its share), and a chart of each CPU's busy
// time split by what took it, with the verdict's evidence; then a
// heatmap of irq+softirq load per CPU over time, NET_RX and NET_TX per CPU,
// the interrupt rate of every sampled NIC queue, softnet drops and time
// squeezes, the throughput of each NIC, and the findings of the run with
// their evidence. It needs no JavaScript and fetches nothing:
// styles are inline, the charts are hand-written SVG, text uses the
// reader's own sans-serif font.
//
// Output is a pure function of the monitor.Record: the same record renders
// to the same bytes (no clock, no map order, fixed number formats). Records
// are read with monitor.ReadRecordFile (which meets a record cut short
// mid-line with the complete samples before the cut and a note), or made
// from a finished run with monitor.Result.Record. The package never prints.
package report
