// Package pcie reads PCI Express link facts from sysfs and config space, walks
// a device's path to its root port, models how much Ethernet traffic a path can
// carry, and turns what it finds into findings. It knows nothing about
// networking beyond the DMA profiles of NIC drivers.
package pcie
