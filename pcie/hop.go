package pcie

// ConfigDamaged begins End.ConfigNote for a config file that does not
// decode (an SR-IOV VF's all-ones header aside), or whose header names
// another device than the function's vendor and device files: its capabilities (link capability, ASPM, a Thunderbolt
// tunnel's VSEC) are unknown, not absent.
const ConfigDamaged = "config damaged: "

// End is one end of a link: a port or a device function.
type End struct {
	Address Address `json:"address"`
	// Name is filled by WithNamer; empty otherwise.
	Name     string `json:"name,omitempty"`
	VendorID uint16 `json:"vendor_id"`
	DeviceID uint16 `json:"device_id"`
	Class    uint32 `json:"class"`
	// PortType comes from the PCI Express capability; nil when that
	// could not be read or the function is conventional PCI.
	PortType *PortType `json:"port_type,omitempty"`
	Link     LinkAttrs `json:"link"`
	// MaxPayload and MaxReadRequest are DevCtl's MPS and MRRS in bytes; 0
	// when unknown (ConfigNote says why).
	MaxPayload     int `json:"mps"`
	MaxReadRequest int `json:"mrrs"`
	// Config is the decoded config space; nil when it could not be read.
	Config *Config `json:"config,omitempty"`
	// ConfigNote says why Config or its capabilities are missing; it
	// begins with ConfigDamaged when the file is there but is not this
	// function's config space.
	ConfigNote string `json:"config_note,omitempty"`
	// PhysFn is set on an SR-IOV virtual function: its physical function.
	PhysFn Address `json:"physfn,omitempty"`
	// AER is what its AER statistics files counted since boot; nil when
	// it has none (no AER capability, or a kernel before 4.19).
	AER *AER `json:"aer,omitempty"`

	dir string // sysfs directory, for the walker
}

// Function is a PCI function below a link.
type Function struct {
	Address Address `json:"address"`
	Class   uint32  `json:"class"`
	// Network is true for class 0x02xxxx (network controllers).
	Network bool `json:"network"`
	// Bridge is true for class 0x0604xx (PCI bridges and switch ports).
	Bridge bool `json:"bridge,omitempty"`
	// Link is an endpoint's own PCIe link (its current and max speed and
	// width); nil for a bridge, or where sysfs has no link attributes.
	Link *LinkAttrs `json:"link,omitempty"`
	// ClassUnread says why the class could not be read. Network is then
	// true only when the function has a netdev (a net/ directory) or
	// shares its vendor:device ID with a network function of the same
	// device: a damaged attribute must not drop a port from the count.
	ClassUnread string `json:"class_unread,omitempty"`
}

// Hop is one PCIe link with both of its ends, as trained and as capable.
// Speeds are GT/s, widths lanes; 0 means unknown.
type Hop struct {
	// Upstream is the port nearer the root (a root port, switch downstream
	// port or PCI-to-PCIe bridge); Downstream the device or switch upstream
	// port at the other end.
	Upstream   End `json:"upstream"`
	Downstream End `json:"downstream"`
	// Speed and Width are the link as trained (the downstream end's current
	// attributes, else the upstream end's).
	Speed float64 `json:"speed_gts"`
	Width int     `json:"width"`
	// CapableSpeed and CapableWidth are what both ends support: the lower
	// of their maxima.
	CapableSpeed float64 `json:"capable_speed_gts"`
	CapableWidth int     `json:"capable_width"`
	// SpeedLimitedBy and WidthLimitedBy name the end whose maximum sets the
	// capability: "device", "port", or "" when both ends agree or one is
	// unknown.
	SpeedLimitedBy Limiter `json:"speed_limited_by,omitempty"`
	WidthLimitedBy Limiter `json:"width_limited_by,omitempty"`
	// Functions are every PCI function below the upstream port: all of
	// them share this link.
	Functions []Function `json:"functions"`
	// Verdict sums up the link; Downgraded, SlotLimited and
	// IdleDowntrained say which of the verdicts apply (more than one may).
	Verdict         Verdict `json:"verdict"`
	Downgraded      bool    `json:"downgraded"`
	SlotLimited     bool    `json:"slot_limited"`
	IdleDowntrained bool    `json:"idle_downtrained"`
	// Reason says why the verdict is architectural or unknown.
	Reason string `json:"reason,omitempty"`
	// Tunnel is set for a link carried through a Thunderbolt or USB4
	// tunnel (an architectural hop whose capacity is the tunnel's).
	Tunnel *Tunnel `json:"tunnel,omitempty"`
	// Chipset is set on the modelled hop of an Intel chipset's uplink
	// (DMI; Path.Chipset): its speed and width are the datasheet's, its
	// upstream end the CPU's host bridge.
	Chipset *ChipsetUplink `json:"chipset_uplink,omitempty"`
	// Notes record disagreements and assumptions.
	Notes []string `json:"notes,omitempty"`
}

// Path is the chain of links from one PCI function up to its root port.
type Path struct {
	// Device is the function asked for.
	Device End `json:"device"`
	// RootBus is the host bridge directory, e.g. "pci0000:00".
	RootBus string `json:"root_bus"`
	// Hops runs from the device's own link up to the root port's.
	Hops []Hop `json:"hops"`
	// Chipset is the modelled hop above the root port when that is an
	// Intel chipset root port (ChipsetUplink): the DMI link to the CPU,
	// which every device behind the chipset shares; nil otherwise.
	Chipset *Hop `json:"chipset,omitempty"`
	// Architectural is set when the device has no link that can be judged,
	// and says how nicdiag knows.
	Architectural string `json:"architectural,omitempty"`
	// Notes record assumptions (port types taken from tree position when
	// the config space was not readable).
	Notes []string `json:"notes,omitempty"`
}

// Limiter names the end of a hop whose capability sets the hop's speed or
// width.
type Limiter string

// Limiters; "" means both ends agree, or one is unknown.
const (
	LimitDevice Limiter = "device"
	LimitPort   Limiter = "port"
)
