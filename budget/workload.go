package budget

import "fmt"

// DefaultFrameBytes is the Ethernet frame size (header and FCS) assumed
// when a Workload gives none.
const DefaultFrameBytes = 1518

// Bounds on a Workload.
const (
	minFrameBytes = 64    // the smallest Ethernet frame
	maxFrameBytes = 16384 // jumbo frames up to 16 KiB
	maxPorts      = 1024  // Workload.Ports; also LinkParams.Shared
)

// Ethernet per-frame costs, in bytes.
const (
	ethGap = 20 // preamble and SFD 8 + inter-frame gap 12
	ethFCS = 4  // frame check sequence, not DMA'd
)

// Direction says which way the host moves packets.
type Direction string

// Directions a Workload can take.
const (
	// RX: every port in use receives at line rate; the host only receives.
	RX Direction = "rx"
	// TX: every port in use sends at line rate; the host only sends.
	TX Direction = "tx"
	// Both: every port in use receives and sends at line rate at once, as
	// a router forwarding in both directions.
	Both Direction = "both"
	// Forward: one-way forwarding. Half the ports in use receive at line
	// rate and the other half send what was received, so the host receives
	// and sends Ports/2 ports' line rate each (docs/pcie-model.md §3.1). It
	// needs Ports >= 2.
	Forward Direction = "forward"
)

// ParseDirection parses "rx", "tx", "both" or "forward".
func ParseDirection(s string) (Direction, error) {
	switch d := Direction(s); d {
	case RX, TX, Both, Forward:
		return d, nil
	}
	return "", fmt.Errorf("%w: direction %q (want rx, tx, both or forward)", ErrInvalidWorkload, s)
}

// Workload is the traffic whose ceiling is asked for.
type Workload struct {
	// FrameBytes is the Ethernet frame size, header and FCS included,
	// preamble and gap not: 64 to 16384; 0 means DefaultFrameBytes.
	FrameBytes int `json:"frame_bytes"`
	// Direction defaults to Both.
	Direction Direction `json:"direction"`
	// Ports is the number of ports in use, each running the workload. 0
	// means every port sharing the narrowest hop (the hop with the lowest
	// RawGbps; on a tie the one with the larger Shared): its Shared count,
	// or 1 if that is 0.
	Ports int `json:"ports"`
	// PortMbps is each port's Ethernet line rate in Mb/s (1000 for 1GbE).
	PortMbps float64 `json:"port_mbps"`
}

// TCPGoodputMbps converts Ethernet frame bits per second into the TCP
// payload they carry over IPv4 with timestamps (52 B of headers, 18 B of
// Ethernet header and FCS): 1448/1518 for MTU 1500, 8948/9018 for MTU 9000.
// It returns 0 for frames too small to carry a payload.
func TCPGoodputMbps(frameMbps float64, frameBytes int) float64 {
	payload := frameBytes - 18 - 52
	if payload <= 0 {
		return 0
	}
	return frameMbps * float64(payload) / float64(frameBytes)
}
