// Package irq reads the kernel's interrupt, softirq and softnet counters,
// maps each NIC queue to its IRQ and to the CPU the IRQ lands on, samples the
// per-CPU load over an interval, and turns a window of samples into findings:
// a core saturated by packet work (irq.hot_core), queue IRQs piled on one CPU
// (irq.affinity_concentrated), a NIC with one receive queue and no RPS
// (nic.single_queue), softnet drops and time squeezes.
//
// /proc/interrupts is parsed by hand (ParseInterrupts): the header names the
// CPU of each column, so offline CPUs never shift counts, and there is no
// 1 MiB limit; it is read in chunks, so memory follows the counts kept, not
// the file (ErrTooLarge caps them). /proc/stat, /proc/softirqs and
// /proc/net/softnet_stat are parsed by hand too, into buffers and slices
// reused from one reading to the next, with their columns keyed by CPU id
// (github.com/prometheus/procfs is their test oracle). The tasks of a watched process tree (Sampler.Watch) are
// read by hand from /proc/PID/task/TID/stat and children; the link and AER
// counters of PCI functions (WithPCIe) with package pcie's parsers. The
// live NIC counters are asked over netlink and ethtool sockets kept open
// per network namespace (nsconn_linux.go; one file per protocol), with the
// request builder of internal/genl.
//
// A Sampler keeps the files it reads open and reads them again from offset
// 0 at each reading (procfs and sysfs regenerate them), parses only its
// NICs' rows of /proc/interrupts in full, and with NextInto reuses the
// Sample it fills: a steady-state sample allocates nothing
// (BenchmarkSample).
//
// Everything reads under a root directory (option.Root), so a snapshot of
// another host works like the live one; the packet counters of NICs in
// another network namespace are read there (WithNetns). The package never
// prints.
package irq
