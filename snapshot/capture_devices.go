package snapshot

import (
	"context"
	"encoding/json"
	"path"
	"strings"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// copyDeviceChain copies a device and every device above it up to
// /sys/devices: PCI functions with pciAttrs, msi_irqs/ and their SR-IOV
// links; other devices with devAttrs.
func (c *copier) copyDeviceChain(dev string) {
	for p := dev; strings.HasPrefix(p, "/sys/devices/") && p != "/sys/devices"; p = path.Dir(p) {
		if c.done["dev:"+p] || c.fatal != nil {
			return
		}
		c.done["dev:"+p] = true
		if isBDF(path.Base(p)) {
			c.copyNames(p, pciAttrs)
			c.copyNames(p, pciLinks)
			c.copyIOMMUType(p)
			c.copyTree(p+"/msi_irqs", 1)
			names, _ := c.list(p)
			for _, n := range names {
				if strings.HasPrefix(n, "virtfn") {
					c.copyNames(p, []string{n})
				}
			}
			continue
		}
		c.copyNames(p, devAttrs)
		c.copyNames(p, []string{"driver", "subsystem"})
	}
}

// copyIOMMUType copies the type of the IOMMU group the PCI function at dev
// belongs to (/sys/kernel/iommu_groups/N/type, through the iommu_group
// link): its default DMA domain.
func (c *copier) copyIOMMUType(dev string) {
	if real, err := c.resolve(dev + "/iommu_group/type"); err == nil {
		c.copyFile(real)
	}
}

func isBDF(s string) bool { return pcie.Address(s).Valid() }

func (c *copier) writeEthtool(ctx context.Context, src nicinfo.EthtoolSource, name string) {
	a, err := src.Answers(ctx, name)
	if err != nil {
		c.skip("ethtool/"+name+".json", err)
		return
	}
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		c.skip("ethtool/"+name+".json", err)
		return
	}
	c.write("/ethtool/"+name+".json", append(b, '\n'))
}
