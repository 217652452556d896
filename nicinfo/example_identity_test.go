package nicinfo_test

import (
	"fmt"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// The host of a MikroTik CCR2004-1G-2XS-PCIe sees four "AR8151" functions
// at 25000 Mb/s with only 10/100 link modes on an 8 GT/s x8 link; a real
// AR8151 is a 2.5 GT/s x1 gigabit chip.
func ExampleCheckIdentity() {
	var nics []nicinfo.NIC
	for fn := range 4 {
		nics = append(nics, nicinfo.NIC{
			Name: fmt.Sprintf("enp1s0f%d", fn), Bus: nicinfo.BusPCI, Driver: "atl1c",
			PCI: &nicinfo.PCIFunction{Address: pcie.Address(fmt.Sprintf("0000:01:00.%d", fn)),
				VendorID: 0x1969, DeviceID: 0x1083, Driver: "atl1c",
				Link: &pcie.LinkAttrs{MaxSpeed: 8, MaxWidth: 8}},
			Link: nicinfo.Link{SpeedMbps: 25000, Duplex: "full",
				Supported: []string{"10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full"}},
		})
	}
	for _, f := range nicinfo.CheckIdentity(nics) {
		fmt.Println(f.Severity, f.Code, f.Subject)
		fmt.Println("rules:", f.Evidence["rules"])
		fmt.Println("probably:", f.Evidence["probably"])
	}
	// Output:
	// warn nic.misidentified 0000:01:00.0
	// rules: speed_above_modes speed_above_chip pcie_beyond_chip functions_above_chip
	// probably: a MikroTik CCR2004-1G-2XS-PCIe router card
}

func ExampleLookupDevice() {
	d, ok := nicinfo.LookupDevice(0x8086, 0x10c9)
	fmt.Println(ok, d.Chip, d.Ports, "ports,", d.Describe())
	// Output: true 82576 2 ports, a 2.5 GT/s x4 gigabit chip
}
