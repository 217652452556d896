package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// copyInterfaces copies every /sys/class/net entry with its device chain
// and ethtool answers, and returns the interface names.
func (c *copier) copyInterfaces(ctx context.Context, et nicinfo.EthtoolSource) ([]string, error) {
	ifaces, err := c.list("/sys/class/net")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	var out []string
	for _, name := range ifaces {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.fatal != nil {
			break
		}
		p := "/sys/class/net/" + name
		real, err := c.resolve(p)
		if err != nil {
			c.skip(p, err)
			continue
		}
		if !c.isDir(real) {
			c.copyFile(real) // bonding_masters
			continue
		}
		out = append(out, name)
		c.copyNames(real, netAttrs)
		c.copyNames(real+"/brport", brportAttrs)
		c.copyNames(real+"/bonding", bondingAttrs)
		c.copyNames(real, c.lowerLinks(real))
		c.copyTree(real+"/queues", 2)
		c.copyTree(real+"/statistics", 1)
		if dev, err := c.resolve(p + "/device"); err == nil {
			c.copyDeviceChain(dev)
		}
		if et != nil {
			c.writeEthtool(ctx, et, name)
		}
	}
	return out, nil
}

// copyPCI copies every PCI function, not only those under a netdev: a NIC
// bound to vfio-pci (DPDK) or to no driver has none, and nicinfo.NoNetdev
// finds it through ghw, which needs each function's modalias (in
// pciAttrs).
func (c *copier) copyPCI() {
	pcis, _ := c.list("/sys/bus/pci/devices")
	for _, b := range pcis {
		if c.fatal != nil {
			return
		}
		if real, err := c.resolve("/sys/bus/pci/devices/" + b); err == nil {
			c.copyDeviceChain(real)
		} else {
			c.skip("/sys/bus/pci/devices/"+b, err)
		}
	}
}

// copyThunderbolt copies the Thunderbolt/USB4 routers' link attributes,
// which tell the generation and link rate of a PCIe tunnel.
func (c *copier) copyThunderbolt() {
	const dir = "/sys/bus/thunderbolt/devices"
	names, _ := c.list(dir)
	for _, n := range names {
		if c.fatal != nil {
			return
		}
		real, err := c.resolve(dir + "/" + n)
		if err != nil {
			c.skip(dir+"/"+n, err)
			continue
		}
		c.copyNames(real, tbAttrs)
	}
}

// tbAttrs are the router attributes nicdiag reads (Linux
// Documentation/ABI/testing/sysfs-bus-thunderbolt).
var tbAttrs = []string{"generation", "rx_speed", "rx_lanes", "tx_speed", "tx_lanes", "authorized", "device_name", "vendor_name", "unique_id"}

// copyProc copies the /proc files, the IRQ affinities and the NUMA nodes'
// CPU lists.
func (c *copier) copyProc() {
	for _, f := range procFiles {
		c.copyFile(f)
	}
	irqs, _ := c.list("/proc/irq")
	for _, n := range irqs {
		if c.fatal != nil {
			return
		}
		if c.isDir("/proc/irq/" + n) {
			c.copyNames("/proc/irq/"+n, irqFiles)
		}
	}
	// The machine's identity (nicinfo.ReadPlatform): /sys/class/dmi/id is a
	// link into /sys/devices/virtual/dmi. Serial numbers and UUIDs are not
	// taken.
	if real, err := c.resolve("/sys/class/dmi/id"); err == nil {
		c.copyNames(real, dmiAttrs)
	}
	nodes, _ := c.list("/sys/devices/system/node")
	for _, n := range nodes {
		if strings.HasPrefix(n, "node") {
			c.copyNames("/sys/devices/system/node/"+n, []string{"cpulist", "cpumap"})
		}
	}
	c.copyCPUs()
	c.copyHostFacts()
}

// copyCPUs copies, for each online CPU, its SMT siblings and its cpufreq
// attributes (irq.ReadCPUs): cpuN/cpufreq is kept as the kernel's link to
// cpufreq/policyN. A few small files per CPU, for at most as many CPUs as
// irq.ReadCPUs reads.
func (c *copier) copyCPUs() {
	const dir = "/sys/devices/system/cpu"
	b, err := c.root.ReadFileMax(dir+"/online", c.lim.MaxFileBytes)
	if err != nil {
		return
	}
	ids, err := irq.ParseCPUList(string(b))
	if err != nil {
		return
	}
	for i, id := range ids {
		if i >= 8192 || c.fatal != nil {
			break
		}
		cpu := dir + "/cpu" + strconv.Itoa(id)
		c.copyNames(cpu+"/topology", irq.TopologyFiles())
		c.copyIdle(cpu)
		if _, err := c.root.Mode(cpu + "/cpufreq"); err != nil {
			continue // no cpufreq (a VM, or scaling off)
		}
		real, err := c.resolve(cpu + "/cpufreq")
		if err != nil {
			c.skip(cpu+"/cpufreq", err)
			continue
		}
		c.copyNames(real, irq.CPUFreqFiles())
	}
}

// dmiAttrs are the DMI strings nicinfo.ReadPlatform reads.
var dmiAttrs = []string{"sys_vendor", "product_name"}

// copyNetlink writes netlink/IFACE.json for each captured interface with
// something rtnetlink says that sysfs does not (SR-IOV VFs, an XDP
// program, a tunnel's setup): as the live kernel reports it, or as the
// source snapshot holds it.
func (c *copier) copyNetlink(ctx context.Context, ifaces []string) {
	all, err := nicinfo.NetlinkFacts(ctx, option.Root(c.src))
	if err != nil {
		c.skip("netlink", err)
		return
	}
	for _, name := range ifaces {
		a, ok := all[name]
		if !ok {
			continue
		}
		a.Schema = nicinfo.NetlinkSchema
		b, err := json.MarshalIndent(a, "", "  ")
		if err != nil {
			c.skip("netlink/"+name+".json", err)
			continue
		}
		c.write("/netlink/"+name+".json", append(b, '\n'))
	}
}

// lowerLinks names the lower_IFACE links in netdev directory dir (the
// interfaces a VLAN, bond or bridge sits on), at most maxLowerLinks.
func (c *copier) lowerLinks(dir string) []string {
	names, _ := c.list(dir)
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, "lower_") && len(out) < maxLowerLinks {
			out = append(out, n)
		}
	}
	return out
}
