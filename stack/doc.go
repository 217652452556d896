// Package stack samples this host's own network stack while a run moves
// traffic, and judges, layer by layer, whether that stack set the run's
// ceiling:
//
//   - the transport: each TCP flow of the run (the sockets of a process
//     tree, found by their inodes in /proc/PID/fd and matched against a
//     sock_diag dump; without a process tree, the flows on given
//     interfaces' addresses) with its bytes, RTT, congestion window,
//     retransmits, delivery rate, the kernel's TCP limit timers
//     (tcpi_busy_time, tcpi_rwnd_limited, tcpi_sndbuf_limited, Linux
//     4.10+), the windows each end advertised and the socket's buffer
//     sizes and drops (SK_MEMINFO); UDP sockets with their buffers and
//     drops;
//   - the socket layer: the UDP and TCP drop counters of /proc/net/snmp,
//     /proc/net/snmp6 and /proc/net/netstat (RcvbufErrors, TCPRcvQDrop,
//     TCPBacklogDrop, TCPZeroWindowDrop, ListenOverflows, ...), per network
//     namespace, with the buffer sysctls they are judged against
//     (net.ipv4.tcp_rmem, tcp_wmem, net.core.rmem_max, wmem_max);
//   - the qdiscs and classes of the interfaces the run uses (kind, the
//     configured rate of a shaper: tbf, htb, cake, fq maxrate; bytes,
//     packets, drops, overlimits, requeues, backlog): a shaper's rate is a
//     ceiling like a link's;
//   - conntrack: entries against the table's maximum and the drop,
//     early-drop and insert-failed statistics, per namespace (no conntrack
//     in the kernel is "not applicable", not an error);
//   - other work on the CPUs: per CPU, the processes outside the run's
//     process tree that took its time, by name;
//   - which interfaces the run's flows route through, so that a monitor
//     given no interface watches those.
//
// A Sampler reads all of that at each call of Read and returns the counts
// of the interval since the previous call as a Sample, a JSON-friendly
// value meant to be stored in a run's record. An Aggregator takes Samples
// one at a time, keeps what the judgement needs (memory flat in the run's
// length), and returns a Summary: per layer, the numbers and a Judgement
// with a sentence in throughput terms and a fix. Everything the judgement
// uses is in the Samples, so a Summary computed from a record is the one
// the run computed.
//
// Qdisc and class dumps, route and link lookups go through
// github.com/vishvananda/netlink. Its TCP sock_diag dump asks for
// INET_DIAG_INFO alone, not the socket's memory (INET_DIAG_SKMEMINFO: its
// buffer sizes and drops), and its parsers are unexported: the dump here
// is the library's request with that extension asked for, sent over the
// project's kept-socket netlink transport (internal/genl), with tcp_info
// and the socket memory parsed here (the library's SocketDiagTCPInfo is
// the test oracle). The library has no type for cake, whose bandwidth is
// read from the qdisc dump's options the same way. /proc files are parsed
// by hand into reused buffers (github.com/prometheus/procfs is their test
// oracle).
//
// Files are read under a root directory (option.Root), so a recorded /proc
// works like the live one; netlink sources are live only. The package
// never prints.
package stack
