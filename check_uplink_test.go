package nicdiag

import (
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/option"
)

// withNVMe adds to tree v an NVMe SSD on a chipset root port of the
// tb3-10g-enclosure laptop's Cannon Lake PCH: root port rp [8086:id] at
// 00:rp, the SSD at bus:00.0, a Samsung 970 EVO Plus [144d:a808] class
// 010802 at 8 GT/s x4 (reconstructed: the IDs are pci.ids 2023.04.10's,
// the link what that SSD trains in an M.2 slot of PCH lanes).
func withNVMe(v tree, rp, id, bus string) tree {
	port := "sys/devices/pci0000:00/0000:00:" + rp
	dev := port + "/0000:" + bus + ":00.0"
	files := map[string]string{
		port + "/vendor": "0x8086\n", port + "/device": id + "\n", port + "/class": "0x060400\n",
		port + "/current_link_speed": "8.0 GT/s PCIe\n", port + "/current_link_width": "4\n",
		port + "/max_link_speed": "8.0 GT/s PCIe\n", port + "/max_link_width": "4\n",
		dev + "/vendor": "0x144d\n", dev + "/device": "0xa808\n", dev + "/class": "0x010802\n",
		dev + "/current_link_speed": "8.0 GT/s PCIe\n", dev + "/current_link_width": "4\n",
		dev + "/max_link_speed": "8.0 GT/s PCIe\n", dev + "/max_link_width": "4\n",
		"sys/bus/pci/devices/0000:00:" + rp:         "->../../../devices/pci0000:00/0000:00:" + rp,
		"sys/bus/pci/devices/0000:" + bus + ":00.0": "->../../../" + dev,
	}
	return v.files(files)
}

// The tb3-10g-enclosure laptop (AQC107 10GbE in a Thunderbolt 3
// enclosure behind the Cannon Lake PCH's root port 00:1c.4): the DMI 3.0
// x4 above the PCH is modelled (8 GT/s x4, 23767 Mb/s of the NIC's
// frames). With one NVMe on the PCH as well, the NIC keeps at least half
// the link when both are busy, more than its 9870 Mb/s: silent. With two,
// a third of it (7922 Mb/s): pcie.shared_uplink at info, naming both and
// the DMI. Never warn: what the SSDs take is their links' capability.
func TestSharedUplink(t *testing.T) {
	one := withNVMe(variant(t, "tb3-10g-enclosure"), "1d.0", "0xa330", "3a")
	fs := checkTree(t, one.dir, WithInterfaces("enp7s0"))
	if f := find(fs, finding.PCIeSharedUplink, "enp7s0"); f != nil {
		t.Errorf("one NVMe: %s", f)
	}
	r, err := Check(t.Context(), option.Root(one.dir), WithInterfaces("enp7s0"))
	if err != nil {
		t.Fatal(err)
	}
	b := r.Host.Selected[0].Budget
	c := b.Chipset()
	if c == nil || c.Chipset.Link != "DMI 3.0 x4" || len(b.SharersAt(c.Upstream.Address)) != 1 || b.SharersAt(c.Upstream.Address)[0].Kind != "NVMe" {
		t.Fatalf("chipset hop %+v, sharers %+v", c, b.Sharers)
	}

	two := withNVMe(one, "1b.0", "0xa340", "3b")
	f := find(checkTree(t, two.dir, WithInterfaces("enp7s0")), finding.PCIeSharedUplink, "enp7s0")
	if f == nil || f.Severity != finding.Info || f.Evidence["hop"] != "0000:00:00.0" ||
		!strings.Contains(f.Summary, "the chipset uplink (DMI 3.0 x4 between the CPU and the Intel 300 Series (Cannon Lake PCH) chipset") ||
		!strings.Contains(f.Summary, "NVMe 0000:3a:00.0 (8 GT/s x4: up to 3.9 GB/s)") || !strings.Contains(f.Summary, "NVMe 0000:3b:00.0") ||
		!strings.Contains(f.Summary, "has about 7922 Mb/s there") || f.Evidence["chipset_uplink"] == "" {
		t.Errorf("two NVMe: %v", f)
	}
}
