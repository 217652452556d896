package nicdiag_test

import (
	"context"
	"fmt"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/monitor"
)

// The seed case: a dual-port 82576 on a mini-PCIe→x1 adapter, forwarding in
// both directions with 1518-byte frames.
func ExampleExplain() {
	b, err := nicdiag.Explain(context.Background(), "enp1s0f0", budget.Workload{},
		nicdiag.WithRoot("testdata/snapshots/82576-minipcie-x1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s-bound at %.0f Mb/s per direction (line rate %.0f), link of %s, width set by the %s, speed by the %s\n",
		b.Bound, b.CeilingMbps.Nominal, b.EthernetMbps, b.LimitingHop, b.WidthLimitedBy, b.SpeedLimitedBy)
	// Output: pcie-bound at 1435 Mb/s per direction (line rate 1974), link of 0000:00:1c.0, width set by the port, speed by the device
}

func ExampleCheck() {
	r, err := nicdiag.Check(context.Background(), nicdiag.WithRoot("testdata/snapshots/82576-minipcie-x1"))
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
	h, err := nicdiag.Inspect(ctx, nicdiag.WithRoot("testdata/snapshots/82576-minipcie-x1"))
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
