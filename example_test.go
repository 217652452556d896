package nicdiag_test

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/option"
)

// The single-read path: Inspect reads the host once; the checks judge what
// it read, and a monitored run of the same NICs is judged against it. The
// host here is a bundled snapshot (the dual 82576 on a mini-PCIe x1
// adapter of the seed report), so that the example runs anywhere and
// without root; its counters never move, so the run has no traffic to
// judge. On a live host, leave option.Root out and run the load as the
// command.
func ExampleHost_Monitor() {
	ctx := context.Background()
	h, err := nicdiag.Inspect(ctx, option.Root("testdata/snapshots/82576-minipcie-x1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range h.Check(nicdiag.Checkers()...) {
		if f.Severity >= finding.Warn {
			fmt.Println(f.Severity, f.Code, f.Subject)
		}
	}
	load := exec.Command("sleep", "0.2") // iperf3 -c PEER -t 10, say
	run, err := h.Monitor(ctx, monitor.WithCommand(load), monitor.WithInterval(50*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := run.Wait(ctx) // until the command exits
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("run:", res.Verdict.Bound, "over", len(res.Summary.NICs), "NICs")
	// Output:
	// warn pcie.bottleneck enp1s0f0
	// warn pcie.slot_limited 0000:01:00.0
	// run: unknown over 2 NICs
}

// The seed case: a dual-port 82576 on a mini-PCIe→x1 adapter, forwarding in
// both directions with 1518-byte frames.
func ExampleExplain() {
	b, err := nicdiag.Explain(context.Background(), "enp1s0f0", budget.Workload{},
		option.Root("testdata/snapshots/82576-minipcie-x1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s-bound at %.0f Mb/s per direction (line rate %.0f), link of %s, width set by the %s, speed by the %s\n",
		b.Bound, b.CeilingMbps.Nominal, b.EthernetMbps, b.LimitingHop, b.WidthLimitedBy, b.SpeedLimitedBy)
	// Output: pcie-bound at 1435 Mb/s per direction (line rate 1974), link of 0000:00:1c.0, width set by the port, speed by the device
}

func ExampleCheck() {
	r, err := nicdiag.Check(context.Background(), option.Root("testdata/snapshots/82576-minipcie-x1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range r.Findings {
		if f.Code == "pcie.bottleneck" {
			fmt.Println(f.Severity, f.Code, f.Subject)
		}
	}
	// Output: warn pcie.bottleneck enp1s0f0
}

// A harness that samples its own load judges the run against the host's
// ceilings: here the samples of a recorded run of the seed case (both
// 82576 ports forwarding both ways at once, testdata/runs), judged with the
// Limits of the same machine's snapshot.
func ExampleHost_Monitored() {
	ctx := context.Background()
	h, err := nicdiag.Inspect(ctx, option.Root("testdata/snapshots/82576-minipcie-x1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	rec, err := monitor.ReadRecordFile("testdata/runs/82576-seed-pcie.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	_, limits := h.Monitored()
	v := monitor.Judge(rec.Samples, limits)
	fmt.Printf("%s bound: %.0f of %.0f Mb/s per direction at %s\n", v.Bound, v.AchievedMbps, *v.CeilingMbps, v.Limit.Subject)
	fmt.Printf("next: %s at %.0f %%\n", v.Next.Layer, v.Next.Share*100)
	// Output:
	// pcie bound: 1378 of 1435 Mb/s per direction at 0000:00:1c.0
	// next: ethernet at 70 %
}
