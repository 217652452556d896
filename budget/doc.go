// Package budget is the throughput model of docs/pcie-model.md: how many
// Ethernet frames per second a NIC's PCIe path can move, against what its
// ports demand at line rate.
//
// For gives the Budget of one NIC on its pcie.Path; Solve is the model
// itself, over a list of LinkParams, for a NIC's DMA Profile (ProfileFor)
// and a Workload. The model takes each link's capacity per direction after
// line encoding, DLLP (Ack, UpdateFC) and SKP tax (§2); the bytes every
// packet costs on the link in each direction: data TLPs, descriptor fetches
// and write-backs, doorbells, interrupts (§3); and the packet rate the
// tightest hop allows (§3.1). It reports each figure as a Range over three
// variants of the unknowns (§3.3).
//
// The model is a bandwidth ceiling. It leaves out read latency against
// outstanding tags, IOMMU misses, Relaxed Ordering, ASPM exit latency, ECRC,
// 4 KiB-boundary and misalignment splits, MMIO reads of head pointers, and
// CPU or interrupt limits (§6).
package budget
