package budget

import (
	"fmt"
	"strings"
)

// Profile is a NIC's DMA pattern: what besides packet data crosses the link
// for each packet (docs/pcie-model.md §3). Zero fields take the documented defaults, so
// the zero Profile is a NIC with 16 B descriptors, no batching at all and
// no interrupts.
type Profile struct {
	// Name says which NIC and driver the profile describes.
	Name string `json:"name"`
	// Virtual marks an emulated device (virtio, vmxnet3); Solve refuses it
	// with ErrVirtual.
	Virtual bool `json:"virtual,omitempty"`
	// RxDescBytes and TxDescBytes are the descriptor (or WQE) sizes;
	// 0 means 16.
	RxDescBytes int `json:"rx_desc_bytes"`
	TxDescBytes int `json:"tx_desc_bytes"`
	// RxWriteBackBytes and TxWriteBackBytes are the sizes of the record
	// the NIC writes back per packet (the descriptor itself, or a CQE);
	// 0 means the descriptor size.
	RxWriteBackBytes int `json:"rx_writeback_bytes"`
	TxWriteBackBytes int `json:"tx_writeback_bytes"`
	// RxFetchBatch and TxFetchBatch are the descriptors fetched per read
	// request burst (b_rf, b_tf); 0 means 1.
	RxFetchBatch int `json:"rx_fetch_batch"`
	TxFetchBatch int `json:"tx_fetch_batch"`
	// RxWriteBackBatch and TxWriteBackBatch are the records written back
	// per write (w_rx, w_tx: WTHRESH on Intel NICs); 0 means 1.
	RxWriteBackBatch int `json:"rx_writeback_batch"`
	TxWriteBackBatch int `json:"tx_writeback_batch"`
	// TxDescsPerPacket is k, 2 when every packet needs a context
	// descriptor; 0 means 1.
	TxDescsPerPacket int `json:"tx_descs_per_packet"`
	// RxDoorbellEvery and TxDoorbellEvery are the packets per tail
	// register write (g_rx, g_tx); 0 means 1.
	RxDoorbellEvery int `json:"rx_doorbell_every"`
	TxDoorbellEvery int `json:"tx_doorbell_every"`
	// IRQEvery is the packets per MSI-X message (q); 0 means none
	// (polling, as with DPDK).
	IRQEvery int `json:"irq_every"`
}

// normalize applies the zero-value defaults and checks the ranges.
func (p Profile) normalize() (Profile, error) {
	fields := []struct {
		name string
		v    *int
		def  int
		max  int
	}{
		{"rx descriptor bytes", &p.RxDescBytes, 16, 4096},
		{"tx descriptor bytes", &p.TxDescBytes, 16, 4096},
		{"rx fetch batch", &p.RxFetchBatch, 1, 4096},
		{"tx fetch batch", &p.TxFetchBatch, 1, 4096},
		{"rx write-back batch", &p.RxWriteBackBatch, 1, 4096},
		{"tx write-back batch", &p.TxWriteBackBatch, 1, 4096},
		{"tx descriptors per packet", &p.TxDescsPerPacket, 1, 64},
		{"rx doorbell period", &p.RxDoorbellEvery, 1, 1 << 16},
		{"tx doorbell period", &p.TxDoorbellEvery, 1, 1 << 16},
		{"interrupt period", &p.IRQEvery, 0, 1 << 16},
	}
	for _, f := range fields {
		if *f.v < 0 || *f.v > f.max {
			return p, fmt.Errorf("%w: %s %d (want 0..%d)", ErrInvalidProfile, f.name, *f.v, f.max)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, c := range []*int{&p.RxWriteBackBytes, &p.TxWriteBackBytes} {
		if *c < 0 || *c > 4096 {
			return p, fmt.Errorf("%w: write-back record %d B (want 0..4096)", ErrInvalidProfile, *c)
		}
	}
	if p.RxWriteBackBytes == 0 {
		p.RxWriteBackBytes = p.RxDescBytes
	}
	if p.TxWriteBackBytes == 0 {
		p.TxWriteBackBytes = p.TxDescBytes
	}
	return p, nil
}

// The profiles of docs/pcie-model.md §3.2. Where the basis says "assumed", the values
// are not taken from a driver or datasheet.
var (
	profIGB82576 = Profile{Name: "igb 82576 (per-descriptor write-back)",
		RxFetchBatch: 8, TxFetchBatch: 8, RxWriteBackBatch: 1, TxWriteBackBatch: 1,
		IRQEvery: 8, RxDoorbellEvery: 16, TxDoorbellEvery: 1}
	profIGB = Profile{Name: "igb I350/82580/I210 (batched write-back)",
		RxFetchBatch: 8, TxFetchBatch: 8, RxWriteBackBatch: 4, TxWriteBackBatch: 16,
		IRQEvery: 8, RxDoorbellEvery: 16, TxDoorbellEvery: 1}
	profIGC = Profile{Name: "igc I225/I226",
		RxFetchBatch: 8, TxFetchBatch: 8, RxWriteBackBatch: 4, TxWriteBackBatch: 16,
		IRQEvery: 8, RxDoorbellEvery: 16, TxDoorbellEvery: 1}
	profE1000e = Profile{Name: "e1000e 82574L/82583V",
		RxFetchBatch: 4, TxFetchBatch: 4, RxWriteBackBatch: 4, TxWriteBackBatch: 1,
		IRQEvery: 8, RxDoorbellEvery: 16, TxDoorbellEvery: 1}
	profR8169 = Profile{Name: "r8169 RTL8111/RTL8125",
		RxFetchBatch: 4, TxFetchBatch: 4, RxWriteBackBatch: 1, TxWriteBackBatch: 1,
		IRQEvery: 8, RxDoorbellEvery: 1, TxDoorbellEvery: 1}
	profIXGBE = Profile{Name: "ixgbe 82599/X520/X540 (Niantic kernel)",
		RxFetchBatch: 1, TxFetchBatch: 32, RxWriteBackBatch: 1, TxWriteBackBatch: 8,
		IRQEvery: 32, RxDoorbellEvery: 32, TxDoorbellEvery: 1}
	profDPDK = Profile{Name: "DPDK poll-mode driver (Niantic-like)",
		RxFetchBatch: 1, TxFetchBatch: 32, RxWriteBackBatch: 1, TxWriteBackBatch: 8,
		IRQEvery: 0, RxDoorbellEvery: 32, TxDoorbellEvery: 32}
	profMLX5 = Profile{Name: "mlx5 ConnectX-4 Lx and later",
		RxDescBytes: 16, TxDescBytes: 64, RxWriteBackBytes: 64, TxWriteBackBytes: 64,
		RxFetchBatch: 8, TxFetchBatch: 8, RxWriteBackBatch: 1, TxWriteBackBatch: 8,
		IRQEvery: 64, RxDoorbellEvery: 32, TxDoorbellEvery: 8}
	profATL1C = Profile{Name: "atl1c-like",
		RxFetchBatch: 8, TxFetchBatch: 8, RxWriteBackBatch: 1, TxWriteBackBatch: 1,
		IRQEvery: 32, RxDoorbellEvery: 16, TxDoorbellEvery: 1}
	profGeneric = Profile{Name: "generic NIC (per-descriptor write-back)",
		RxFetchBatch: 8, TxFetchBatch: 8, RxWriteBackBatch: 1, TxWriteBackBatch: 1,
		IRQEvery: 8, RxDoorbellEvery: 16, TxDoorbellEvery: 1}
	profVirtual = Profile{Name: "virtual NIC", Virtual: true}
)

// Bases of the profiles: where their values come from (ids as in
// docs/pcie-model.md §1).
const (
	basisIGB82576 = "igb.h: IGB_RX_WTHRESH and IGB_TX_WTHRESH are 1 on an 82576 with MSI-X, so every descriptor is written back on its own; PTHRESH/HTHRESH 8 (fetches of 8); RX tail written every 16 buffers (I3). With MSI or INTx the driver uses 4/16 and the I350 profile fits better"
	basisIGB      = "igb.h: IGB_RX_WTHRESH 4 and IGB_TX_WTHRESH 16 on every MAC but an 82576 with MSI-X; PTHRESH/HTHRESH 8; RX tail every 16 buffers (I3)"
	basisIGC      = "assumed the same as igb on I350 (WTHRESH 4/16, fetches of 8); not taken from igc sources"
	basisE1000e   = "82574/82583V datasheets: 16 B descriptors fetched in cache-line bursts, write-back batched by WTHRESH (I4); values approximate"
	basisR8169    = "assumed: no descriptor batching, write-back per descriptor, a doorbell per packet; RTL8111 DevCap MaxPayload is 128"
	basisIXGBE    = "pcie-bench/pcie-model niantic.py, 82599 kernel driver: 40-descriptor TX prefetch, TX write-back batch 8, no RX batching (M)"
	basisIXGBELk  = "assumed like ixgbe (pcie-bench/pcie-model niantic.py, 82599 kernel driver); not measured for this driver"
	basisDPDK     = "pcie-bench/pcie-model niantic.py with the DPDK PMD: polling (no interrupts), doorbells per 32-packet burst (M); assumes a DPDK application owns the device"
	basisMLX5     = "assumed: 16 B RX WQE, 64 B TX WQE, 64 B CQEs, TX CQEs per 8 packets; no CQE compression or inline WQEs, so pessimistic"
	basisMLX4     = "assumed like mlx5 (16 B RX WQE, 64 B TX WQE, 64 B CQEs, no CQE compression); pessimistic"
	basisATL1C    = "assumed for atl1c (Atheros AR813x/AR815x/AR816x and whatever else its driver binds): descriptors fetched 8 at a time and written back one by one, an interrupt per 32 packets; not taken from atl1c sources"
	basisGeneric  = "generic: no profile for this driver; assumes 16 B descriptors fetched 8 at a time and written back one by one (pessimistic)"
	basisVirtual  = "virtual device: the PCIe link it reports is emulated, so the PCIe model does not apply"
)

// igb82576IDs are the Intel 82576 device IDs (e1000_hw.h E1000_DEV_ID_82576*).
var igb82576IDs = map[uint16]bool{
	0x10c9: true, 0x10e6: true, 0x10e7: true, 0x10e8: true,
	0x1526: true, 0x150a: true, 0x1518: true, 0x150d: true,
}

// ProfileFor returns the DMA profile for a NIC bound to driver (the sysfs
// driver name; "" if unbound) with PCI IDs vendor:device, and the basis for
// its values. Unknown drivers fall back on the IDs where they are
// recognised, then on a generic, pessimistic profile.
func ProfileFor(driver string, vendor, device uint16) (Profile, string) {
	const intel, virtio, vmware = 0x8086, 0x1af4, 0x15ad
	is82576 := vendor == intel && igb82576IDs[device]
	switch strings.ToLower(driver) {
	case "igb":
		if is82576 {
			return profIGB82576, basisIGB82576
		}
		return profIGB, basisIGB
	case "igc":
		return profIGC, basisIGC
	case "e1000e":
		return profE1000e, basisE1000e
	case "r8169", "r8168", "r8125", "r8126":
		return profR8169, basisR8169
	case "ixgbe":
		return profIXGBE, basisIXGBE
	case "i40e", "ice", "iavf", "ixgbevf", "atlantic":
		p := profIXGBE
		p.Name = driver + " (assumed ixgbe-like)"
		return p, basisIXGBELk
	case "vfio-pci", "uio_pci_generic", "igb_uio":
		return profDPDK, basisDPDK
	case "mlx5_core":
		return profMLX5, basisMLX5
	case "mlx4_core", "mlx4_en":
		p := profMLX5
		p.Name = "mlx4 ConnectX-3 (assumed mlx5-like)"
		return p, basisMLX4
	case "atl1c":
		return profATL1C, basisATL1C
	case "virtio-pci", "virtio_pci", "virtio_net", "vmxnet3":
		return profVirtual, basisVirtual
	}
	switch {
	case is82576:
		return profIGB82576, basisIGB82576
	case vendor == virtio, vendor == vmware && device == 0x07b0:
		return profVirtual, basisVirtual
	}
	return profGeneric, basisGeneric
}
