package budget

// Bound names the stage that sets the ceiling.
type Bound string

// Bounds.
const (
	BoundEthernet Bound = "ethernet"
	BoundPCIe     Bound = "pcie"
	// BoundTunnel: a Thunderbolt or USB4 PCIe tunnel on the path.
	BoundTunnel Bound = "tunnel"
	// BoundNone: nothing physical is known to bound the NIC (a virtual
	// NIC without a link speed).
	BoundNone Bound = "none"
)

// LinkDir is a PCIe link direction as seen from the NIC.
type LinkDir string

// Link directions.
const (
	Upstream   LinkDir = "up"   // device to host: RX data, write-backs, read requests, MSI
	Downstream LinkDir = "down" // host to device: TX data, completions, doorbells
)

// Range is a value under the three variants of docs/pcie-model.md §3.3.
type Range struct {
	Low     float64 `json:"low"`     // paper DLLP mode, RCB-sized completions
	Nominal float64 `json:"nominal"` // scaled DLLP mode, MPS-sized completions
	High    float64 `json:"high"`    // as nominal, with 32-bit addresses
}

// PacketCost is what one packet costs on a link, in bytes including TLP
// headers and framing, per PCIe direction, for a received and a sent packet.
type PacketCost struct {
	RXUp   float64 `json:"rx_up"`   // received packet, device to host
	RXDown float64 `json:"rx_down"` // received packet, host to device
	TXUp   float64 `json:"tx_up"`   // sent packet, device to host
	TXDown float64 `json:"tx_down"` // sent packet, host to device
}

// HopResult is one hop's share of the worked calculation, under the nominal
// variant unless a field is a Range.
type HopResult struct {
	Index  int     `json:"index"`          // position in the links given
	Addr   string  `json:"addr,omitempty"` // LinkParams.Addr
	Gen    int     `json:"gen"`            // PCIe generation
	GTs    float64 `json:"gts"`            // speed solved for
	Width  int     `json:"width"`          // width solved for
	Shared int     `json:"shared"`         // LinkParams.Shared as given
	Busy   int     `json:"busy"`           // ports in use crossing the hop: min(Ports, Shared), or Ports
	// RawGbps is the bandwidth per direction after line encoding, or a
	// tunnel's figure.
	RawGbps float64 `json:"raw_gbps"`
	// TunnelGbps is set for a Thunderbolt or USB4 tunnel: the PCIe data it
	// carries per direction, used instead of the link's capacity.
	TunnelGbps float64 `json:"tunnel_gbps,omitempty"`
	// CapacityGbps is C_dir, what is left per direction for TLPs after the
	// DLLP and SKP tax (Low: paper mode; Nominal and High: scaled).
	CapacityGbps Range `json:"capacity_gbps"`
	// Cost is the per-packet cost on this hop.
	Cost PacketCost `json:"cost"`
	// UpBytes and DownBytes are the bytes one packet of the workload costs
	// in each direction (RX and TX costs weighted by the direction mix).
	UpBytes   float64 `json:"up_bytes"`
	DownBytes float64 `json:"down_bytes"`
	// PCIeMbps is the ceiling this hop alone sets on the whole workload,
	// in the units of Result.CeilingMbps.
	PCIeMbps Range `json:"pcie_mbps"`
	// Dir is the direction that binds at this hop.
	Dir LinkDir `json:"pcie_direction"`
}

// Result is the solved model for a workload on a path.
type Result struct {
	// Workload is the workload solved, with defaults filled in.
	Workload Workload `json:"workload"`
	// Profile names the DMA profile used.
	Profile string `json:"profile"`
	// MPS, MRRS and RCB are the path values used.
	MPS  int `json:"mps"`
	MRRS int `json:"mrrs"`
	RCB  int `json:"rcb"`
	// Assumptions lists the defaults the model had to take for this input.
	Assumptions []string `json:"assumptions,omitempty"`
	// EthernetMbps is the line-rate demand: Ethernet frame bits per second
	// (header and FCS, no preamble or gap) in each direction the workload
	// uses, summed over the ports in use.
	EthernetMbps float64 `json:"ethernet_mbps"`
	// PCIeMbps is what the path can carry, in the same units, ignoring the
	// Ethernet limit.
	PCIeMbps Range `json:"pcie_mbps"`
	// CeilingMbps is min(EthernetMbps, PCIeMbps): what the workload can
	// move in each direction it uses, summed over the ports in use.
	CeilingMbps Range `json:"ceiling_mbps"`
	// PacketsPerSec is the nominal ceiling in packets per second per
	// direction used.
	PacketsPerSec float64 `json:"packets_per_sec"`
	// Bound is the stage that sets the nominal ceiling.
	Bound Bound `json:"bound"`
	// Hop and Dir locate the tightest PCIe hop and direction (nominal),
	// whether or not PCIe is the bound; Hop indexes Hops.
	Hop int     `json:"hop_index"`
	Dir LinkDir `json:"pcie_direction"`
	// Hops holds the per-hop calculation, in the order given.
	Hops []HopResult `json:"hops"`
	// AtCapability is the same workload solved with every hop at the
	// speed and width both its ends support (MaxGTs, MaxWidth). Solve always
	// sets it; it is nil inside itself.
	AtCapability *Result `json:"at_capability,omitempty"`
}
