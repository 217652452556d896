package nicdiag_test

import (
	"context"
	"fmt"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/budget"
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
