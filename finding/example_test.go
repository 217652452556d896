package finding_test

import (
	"fmt"

	"github.com/nicdiag/nicdiag/finding"
)

func ExampleSort() {
	fs := []finding.Finding{
		{Code: finding.NICSingleQueue, Severity: finding.Warn, Subject: "eth0"},
		{Code: finding.PCIeBottleneck, Severity: finding.Error, Subject: "enp1s0f0"},
		{Code: finding.PCIeSlotLimited, Severity: finding.Info, Subject: "0000:01:00.0"},
	}
	finding.Sort(fs)
	for _, f := range fs {
		fmt.Println(f.Severity, f.Code, f.Subject)
	}
	w, _ := finding.Worst(fs)
	fmt.Println("worst:", w)
	// Output:
	// error pcie.bottleneck enp1s0f0
	// warn nic.single_queue eth0
	// info pcie.slot_limited 0000:01:00.0
	// worst: error
}
