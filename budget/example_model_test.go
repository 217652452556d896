package budget_test

import (
	"fmt"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/pcie"
)

// The motivating case: a dual-port 82576 (igb) whose x1 link runs at
// 2.5 GT/s with MPS 128, forwarding 1518 B frames both ways on both ports.
func ExampleSolve() {
	profile, _ := budget.ProfileFor("igb", 0x8086, 0x10c9)
	links := []budget.LinkParams{{Addr: "0000:01:00.0", GTs: 2.5, Width: 1, MaxGTs: 2.5, MPS: 128, MRRS: 512, RCB: 64, Shared: 2}}
	r, err := budget.Solve(links, profile, budget.Workload{Direction: budget.Both, PortMbps: 1000})
	if err != nil {
		fmt.Println(err)
		return
	}
	h := r.Hops[r.Hop]
	fmt.Printf("line rate: %d ports x 1000 Mb/s = %.0f Mb/s of frames each way\n", r.Workload.Ports, r.EthernetMbps)
	fmt.Printf("PCIe %s GT/s x%d: %.3f Gb/s per direction for TLPs, %.0f B up per forwarded packet\n",
		pcie.FormatGTs(h.GTs), h.Width, h.CapacityGbps.Nominal, h.UpBytes)
	fmt.Printf("ceiling: %.0f Mb/s each way (%.0f-%.0f), bound by %s (%s, hop %s)\n",
		r.CeilingMbps.Nominal, r.CeilingMbps.Low, r.CeilingMbps.High, r.Bound, r.Dir, h.Addr)
	// Output:
	// line rate: 2 ports x 1000 Mb/s = 1974 Mb/s of frames each way
	// PCIe 2.5 GT/s x1: 1.860 Gb/s per direction for TLPs, 1967 B up per forwarded packet
	// ceiling: 1435 Mb/s each way (1367-1488), bound by pcie (up, hop 0000:01:00.0)
}
