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

// fill validates w and fills in its defaults; ports is the port count to
// take when w gives none.
func (w *Workload) fill(ports int) error {
	if w.FrameBytes == 0 {
		w.FrameBytes = DefaultFrameBytes
	}
	if w.FrameBytes < minFrameBytes || w.FrameBytes > maxFrameBytes {
		return fmt.Errorf("%w: frame %d B (want %d..%d)", ErrInvalidWorkload, w.FrameBytes, minFrameBytes, maxFrameBytes)
	}
	if w.Direction == "" {
		w.Direction = Both
	}
	if _, err := ParseDirection(string(w.Direction)); err != nil {
		return err
	}
	if !(w.PortMbps > 0) || w.PortMbps > 1e7 {
		return fmt.Errorf("%w: port speed %v Mb/s", ErrInvalidWorkload, w.PortMbps)
	}
	if w.Ports < 0 || w.Ports > maxPorts {
		return fmt.Errorf("%w: %d ports", ErrInvalidWorkload, w.Ports)
	}
	if w.Ports == 0 {
		w.Ports = max(1, ports)
	}
	if w.Direction == Forward && w.Ports < 2 {
		return fmt.Errorf("%w: one-way forwarding needs 2 or more ports, got %d", ErrInvalidWorkload, w.Ports)
	}
	return nil
}

// ethernetMbps is the line-rate demand of a filled workload
// (docs/pcie-model.md §3.1).
func (w *Workload) ethernetMbps() float64 {
	f := float64(w.FrameBytes)
	share := float64(w.Ports)
	if w.Direction == Forward {
		share /= 2
	}
	return share * w.PortMbps * f / (f + ethGap)
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
