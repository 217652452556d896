package pcie_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

func ExampleParseSpeed() {
	for _, s := range []string{"8.0 GT/s PCIe", "2.5 GT/s", "Unknown"} {
		v, err := pcie.ParseSpeed(s)
		fmt.Println(v, err)
	}
	// Output:
	// 8 <nil>
	// 2.5 <nil>
	// 0 pcie: link speed unknown
}

func ExampleDecodeConfig() {
	// A 256-byte config space holding only a PCI Express capability at
	// 0x40: an endpoint, MPS 256 of 512, MRRS 512, LnkCap 5 GT/s x4,
	// trained 2.5 GT/s x1.
	b := make([]byte, 256)
	b[0], b[1], b[2], b[3] = 0x86, 0x80, 0xc9, 0x10 // 8086:10c9
	b[6] = 0x10                                     // status: capability list
	b[0x34] = 0x40
	copy(b[0x40:], []byte{
		0x10, 0x00, 0x02, 0x00, // Express v2, endpoint
		0x02, 0x00, 0x00, 0x00, // DevCap: MaxPayload 512
		0x20, 0x20, 0x00, 0x00, // DevCtl: MPS 256, MRRS 512
		0x42, 0x0c, 0x00, 0x00, // LnkCap: 5 GT/s x4, ASPM L0s L1
		0x02, 0x00, 0x11, 0x00, // LnkCtl: ASPM L1; LnkSta 2.5 GT/s x1
	})
	c, err := pcie.DecodeConfig(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	x := c.Express
	fmt.Printf("%s MPS %d/%d MRRS %d\n", x.PortType, x.MaxPayload, x.MaxPayloadSupported, x.MaxReadRequest)
	fmt.Printf("LnkCap %s GT/s x%d ASPM %s; LnkSta %s GT/s x%d; ASPM %s enabled\n",
		pcie.FormatGTs(x.LinkCapSpeed), x.LinkCapWidth, x.ASPMSupport, pcie.FormatGTs(x.LinkSpeed), x.LinkWidth, x.ASPMEnabled)
	// Output:
	// endpoint MPS 256/512 MRRS 512
	// LnkCap 5 GT/s x4 ASPM L0s L1; LnkSta 2.5 GT/s x1; ASPM L1 enabled
}

func ExamplePathTo() {
	// A two-file snapshot: a root port and a card below it, as sysfs lays
	// them out. The card can do 5 GT/s x4; the slot gives x1.
	root, _ := os.MkdirTemp("", "pcie-example")
	defer os.RemoveAll(root)
	write := func(dir string, files map[string]string) {
		full := filepath.Join(root, "sys/devices/pci0000:00", dir)
		os.MkdirAll(full, 0o755)
		for k, v := range files {
			os.WriteFile(filepath.Join(full, k), []byte(v+"\n"), 0o644)
		}
	}
	write("0000:00:1c.0", map[string]string{"class": "0x060400",
		"current_link_speed": "5.0 GT/s PCIe", "current_link_width": "1",
		"max_link_speed": "5.0 GT/s PCIe", "max_link_width": "1"})
	write("0000:00:1c.0/0000:01:00.0", map[string]string{"class": "0x020000",
		"current_link_speed": "5.0 GT/s PCIe", "current_link_width": "1",
		"max_link_speed": "5.0 GT/s PCIe", "max_link_width": "4"})
	os.MkdirAll(filepath.Join(root, "sys/bus/pci/devices"), 0o755)
	os.Symlink("../../../devices/pci0000:00/0000:00:1c.0/0000:01:00.0", filepath.Join(root, "sys/bus/pci/devices/0000:01:00.0"))

	p, err := pcie.PathTo(context.Background(), "0000:01:00.0", option.Root(root))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range p.Hops {
		fmt.Printf("%s > %s: %s GT/s x%d, capable %s GT/s x%d, %s\n", h.Upstream.Address, h.Downstream.Address,
			pcie.FormatGTs(h.Speed), h.Width, pcie.FormatGTs(h.CapableSpeed), h.CapableWidth, h.Verdict)
	}
	for _, f := range p.Findings() {
		fmt.Println(f.Severity, f.Code)
	}
	// Output:
	// 0000:00:1c.0 > 0000:01:00.0: 5 GT/s x1, capable 5 GT/s x1, slot_limited
	// info pcie.slot_limited
}
