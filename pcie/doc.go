// Package pcie reads PCI Express link facts from sysfs and config space:
// each function's link attributes (ReadLinkAttrs), its decoded configuration
// space (DecodeConfig), and the chain of links from a function up to its root
// port with both ends of every link (PathTo, Links). It judges each link
// against what its two ends support (Verdict) and reports the result as
// findings. It models no traffic: the throughput model is package budget.
package pcie
