package nicinfo

import "github.com/nicdiag/nicdiag/pcie"

// Bus says what a network interface hangs off.
type Bus string

// Bus kinds.
const (
	BusPCI     Bus = "pci"
	BusUSB     Bus = "usb"
	BusVirtual Bus = "virtual" // no device: veth, bridge, bond, tun, lo, ifb
	BusOther   Bus = "other"   // a device on some other bus (platform, vmbus, ...)
)

// Speed values.
const (
	// SpeedUnknown is Link.SpeedMbps when the driver gives no speed
	// (virtio, link down, virtual interfaces). The kernel's raw sentinels
	// (0xffffffff, 65535, -1, 0) are all mapped to it; the CLI prints it as
	// "unknown", JSON carries it as -1.
	SpeedUnknown = -1
)

// NIC is everything nicdiag knows about one network interface. Fields that
// could not be read are left at their zero value (or -1 where 0 is a valid
// reading) and named in Missing. The JSON field names are a stable contract.
type NIC struct {
	Name      string    `json:"name"`
	Index     int       `json:"index"`
	MAC       string    `json:"mac,omitempty"`
	PermMAC   string    `json:"perm_mac,omitempty"`
	OperState OperState `json:"operstate,omitempty"`
	MTU       int       `json:"mtu,omitempty"`
	Bus       Bus       `json:"bus"`
	// Kind is the link kind: on the live host the netlink kind ("veth",
	// "bridge", "ifb", ...; "device" for hardware, "loopback" for lo); in a snapshot the
	// uevent DEVTYPE ("bridge", "bond", "vlan", "wlan"), often empty. It is
	// the one field that may differ between a host and its snapshot.
	Kind string `json:"kind,omitempty"`

	// PCI is the PCI function the interface belongs to; nil when it is not
	// on PCI.
	PCI *PCIFunction `json:"pci,omitempty"`
	// USB describes the USB device for Bus == BusUSB.
	USB *USBDevice `json:"usb,omitempty"`

	// Driver is the netdev driver (ethtool -i), e.g. "virtio_net"; the PCI
	// driver is in PCI.Driver ("virtio-pci").
	Driver          string `json:"driver,omitempty"`
	DriverVersion   string `json:"driver_version,omitempty"`
	FirmwareVersion string `json:"firmware_version,omitempty"`
	BusInfo         string `json:"bus_info,omitempty"`

	Link Link `json:"link"`

	Queues Queues `json:"queues"`

	// NUMANode is -1 when the platform has no NUMA information.
	NUMANode  int    `json:"numa_node"`
	LocalCPUs string `json:"local_cpus,omitempty"`

	// Missing names each field that could not be read, with the reason
	// ("ethtool.link: operation not supported", "pci.config: needs root
	// (64 of 256 bytes readable)").
	Missing []string `json:"missing,omitempty"`
	// Warnings are facts that contradict each other, e.g. an ethtool
	// bus-info that is not the PCI function sysfs names.
	Warnings []string `json:"warnings,omitempty"`
	// Rings are the RX and TX ring sizes and their maximums (ethtool -g);
	// nil when the driver has none (veth) or they were not recorded.
	Rings *Rings `json:"rings,omitempty"`
	// LossStats are the driver's `ethtool -S` counters of packets lost or
	// held back (EthtoolAnswers.LossStats), since it started counting;
	// nil when none was read.
	LossStats map[string]uint64 `json:"loss_stats,omitempty"`

	// Virtio is the virtio device of a virtio_net interface; nil for
	// every other.
	Virtio *VirtioDevice `json:"virtio,omitempty"`
	// VFConfig holds an SR-IOV physical function's settings for each of
	// its VFs (rate caps, VLAN, spoof check, trust), from rtnetlink on the
	// live host and netlink/IFACE.json in a snapshot; nil for a function
	// without VFs or when netlink is off (WithNetlink).
	VFConfig []VFConfig `json:"vf_config,omitempty"`

	// Features are the offloads nicdiag judges (JudgedFeatures: GRO, LRO,
	// TSO, GSO, checksumming, scatter-gather) by kernel name, as ethtool
	// -k reports them; nil when not read (see Missing).
	Features map[string]Feature `json:"features,omitempty"`
	// Coalesce is the interrupt moderation (ethtool -c); nil when not read
	// or not supported by the driver (see Missing).
	Coalesce *Coalesce `json:"coalesce,omitempty"`
	// Bridge names the bridge this interface is a port of
	// (/sys/class/net/IFACE/brport), directly or through the bond or team
	// it is enslaved to, or "ovs-system" for an Open vSwitch port: frames
	// received on it may be forwarded out of another interface.
	Bridge string `json:"bridge,omitempty"`
	// Carrier is the carrier up/down counters since the netdev appeared;
	// nil where sysfs has no carrier_changes.
	Carrier *Carrier `json:"carrier,omitempty"`
	// EEE is Energy-Efficient Ethernet (ethtool --show-eee); nil when the
	// driver has none (veth, virtio) or it was not recorded.
	EEE *EEE `json:"eee,omitempty"`
	// Pause is the flow-control setting (ethtool -a); nil when the driver
	// has none or it was not recorded.
	Pause *Pause `json:"pause,omitempty"`
	// Lower are the interfaces this one sits on, from its lower_IFACE
	// links: a VLAN's parent, a bond's or team's members, a bridge's
	// ports, a macvlan's parent; nil for an interface on nothing.
	Lower []string `json:"lower,omitempty"`
	// Bond is a bonding master's mode, hash policy and members
	// (/sys/class/net/BOND/bonding/); nil for every other interface.
	Bond *Bond `json:"bond,omitempty"`
	// FEC is the link's forward error correction and its counters
	// (ethtool -I --show-fec); nil when the driver has none.
	FEC *FEC `json:"fec,omitempty"`
	// Module is the pluggable module's own diagnostics, decoded from its
	// EEPROM (ethtool -m); nil without a module with diagnostics.
	Module *ModuleDiag `json:"module,omitempty"`
	// ModuleErr is why the module's EEPROM could not be read or decoded,
	// nil when it was, or when the port has no module or the driver no
	// access to it. The kernel answers the module EEPROM request only to
	// a process with CAP_NET_ADMIN: errors.Is(ModuleErr, os.ErrPermission)
	// holds then. It is also named in Missing.
	ModuleErr error `json:"-"`
	// XDP is the attached XDP program, from rtnetlink (netlink/IFACE.json
	// in a snapshot); nil for none or when netlink is off.
	XDP *XDP `json:"xdp,omitempty"`
	// Tunnel is a VXLAN or Geneve device's setup, from rtnetlink; nil for
	// every other interface.
	Tunnel *Tunnel `json:"tunnel,omitempty"`
}

// Physical reports whether the interface sits on a bus (PCI, USB or other)
// rather than being purely virtual.
func (n *NIC) Physical() bool { return n.Bus != BusVirtual }

// Netdev reports whether the record is a network interface; false for a
// PCI network function without one (see NoNetdev).
func (n *NIC) Netdev() bool { return n.Name != "" }

// ID names the record: the interface name, or the PCI address of a
// function without a netdev.
func (n *NIC) ID() string {
	if n.Name == "" && n.PCI != nil {
		return string(n.PCI.Address)
	}
	return n.Name
}

// PCIFunction is the PCI identity of a NIC's function.
type PCIFunction struct {
	Address         pcie.Address `json:"address"` // "0000:01:00.0"
	VendorID        uint16       `json:"vendor_id"`
	DeviceID        uint16       `json:"device_id"`
	SubsystemVendor uint16       `json:"subsystem_vendor_id"`
	SubsystemDevice uint16       `json:"subsystem_device_id"`
	// PCIID and SubsystemID are the same IDs as lspci -n writes them
	// ("8086:10c9", "8086:a03c"); empty when the IDs could not be read.
	PCIID       string `json:"pci_id,omitempty"`
	SubsystemID string `json:"subsystem_id,omitempty"`
	// Class is the 24-bit class code (0x020000 = Ethernet controller).
	Class    uint32 `json:"class"`
	Revision uint8  `json:"revision"`
	// Names from pci.ids; empty when no pci.ids was found or the ID is not
	// in it.
	VendorName    string `json:"vendor_name,omitempty"`
	DeviceName    string `json:"device_name,omitempty"`
	SubsystemName string `json:"subsystem_name,omitempty"`
	ClassName     string `json:"class_name,omitempty"`
	Driver        string `json:"driver,omitempty"`
	// IRQs are the numbers in the function's msi_irqs/, or its legacy irq.
	IRQs []int `json:"irqs,omitempty"`
	// PhysFn is the physical function of an SR-IOV virtual function.
	PhysFn pcie.Address `json:"physfn,omitempty"`
	// VFs are the virtual functions of an SR-IOV physical function.
	VFs []pcie.Address `json:"vfs,omitempty"`
	// TotalVFs is sriov_totalvfs; 0 when the function has no SR-IOV.
	TotalVFs int `json:"sriov_totalvfs,omitempty"`
	// Link is the function's own PCIe link; nil for conventional PCI.
	Link *pcie.LinkAttrs `json:"pcie_link,omitempty"`
	// Emulator names the hypervisor (HypervisorQEMU) whose model of a chip
	// this function is, where its IDs alone cannot say so and the
	// platform does: QEMU's e1000e keeps Intel's subsystem vendor. Empty
	// otherwise; Label reads it.
	Emulator string `json:"emulator,omitempty"`
}

// USBDevice is the USB device a NIC sits on.
type USBDevice struct {
	Path      string `json:"path"` // "2-1"
	VendorID  uint16 `json:"vendor_id"`
	ProductID uint16 `json:"product_id"`
	// SpeedMbps is the bus speed the device enumerated at (sysfs "speed").
	SpeedMbps int    `json:"speed_mbps"`
	Driver    string `json:"driver,omitempty"`
}

// Link is the Ethernet link as the driver reports it.
type Link struct {
	// SpeedMbps is the negotiated speed in Mb/s, or SpeedUnknown (-1, also
	// -1 in JSON) when neither ethtool nor sysfs knows it (no link,
	// virtio, virtual interfaces).
	SpeedMbps int    `json:"speed_mbps"`
	Duplex    Duplex `json:"duplex,omitempty"`
	Autoneg   *bool  `json:"autoneg,omitempty"`
	Port      string `json:"port,omitempty"` // "TP", "FIBRE", "DA", ...
	// Supported and Advertised are kernel link-mode names such as
	// "1000baseT/Full" and "25000baseSR/Full".
	Supported  []string `json:"supported_modes,omitempty"`
	Advertised []string `json:"advertised_modes,omitempty"`
	// PartnerAdvertised are the speed modes the link partner advertised
	// in autonegotiation ("Link partner advertised link modes"); empty
	// when autoneg is off, the link is down, or the driver does not say.
	PartnerAdvertised []string `json:"partner_modes,omitempty"`
	// Nominal names the fields above that the driver did not measure, with
	// why ("duplex: ..."): checks do not judge them.
	Nominal []string `json:"nominal,omitempty"`
}

// Queues counts queues as sysfs and ethtool see them.
type Queues struct {
	// RX and TX count the queues/rx-N and tx-N directories in sysfs.
	RX int `json:"rx"`
	TX int `json:"tx"`
	// Channels as ethtool -l reports them; nil when unsupported.
	Channels *Channels `json:"channels,omitempty"`
	// RPS is true when any rx queue has a non-empty rps_cpus mask.
	RPS bool `json:"rps,omitempty"`
}

// Channels is ethtool -l.
type Channels struct {
	MaxRX       int `json:"max_rx"`
	MaxTX       int `json:"max_tx"`
	MaxOther    int `json:"max_other"`
	MaxCombined int `json:"max_combined"`
	RX          int `json:"rx"`
	TX          int `json:"tx"`
	Other       int `json:"other"`
	Combined    int `json:"combined"`
}

// Duplex is the link's duplex as the driver reports it.
type Duplex string

// Duplex values.
const (
	DuplexFull    Duplex = "full"
	DuplexHalf    Duplex = "half"
	DuplexUnknown Duplex = "unknown"
)

// OperState is /sys/class/net/IFACE/operstate (RFC 2863): "up", "down",
// "lowerlayerdown", "dormant", "testing", "notpresent" or "unknown".
type OperState string

// Operational states nicdiag tests for.
const (
	OperUp             OperState = "up"
	OperDown           OperState = "down"
	OperLowerLayerDown OperState = "lowerlayerdown"
)
