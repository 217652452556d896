package nicinfo_test

import (
	"context"
	"fmt"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// List the physical NICs of a snapshot with their PCI function and driver.
func Example() {
	nics, err := nicinfo.List(context.Background(),
		option.Root("../testdata/snapshots/rtl8111-ich10-x58"),
		nicinfo.WithPCIIDs("testdata/pci.ids"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range nics {
		if n.Physical() {
			fmt.Println(n.Name, n.PCI.Address, n.Driver, n.Link.SpeedMbps, n.PCI.DeviceName)
		}
	}
	// Output:
	// enp7s0 0000:07:00.0 r8169 1000 RTL8111/8168/8411 PCI Express Gigabit Ethernet Controller
	// enp8s0 0000:08:00.0 r8169 1000 RTL8111/8168/8411 PCI Express Gigabit Ethernet Controller
}
