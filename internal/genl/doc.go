// Package genl builds netlink requests and asks them over a kept socket:
// the one request builder and transport of nicdiag's netlink questions
// (generic netlink: the netdev family's queue statistics, the ethtool
// family's pause statistics and interrupt moderation; routing netlink:
// interface statistics).
//
// Msg builds a request in a buffer it reuses. A generic netlink request
// starts with Msg.Genl, which writes struct genlmsghdr with its reserved
// field zero: since Linux 6.1 a family refuses a non-zero one with EINVAL
// for every command from its resv_start_op on (all of the netdev
// family's, the ethtool family's newer ones). Conn sends a Msg and hands
// each reply to a function; Conn.FamilyID looks a family's id up through
// the kernel's nlctrl family with the same builder.
package genl
