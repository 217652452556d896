// Package nicinfo lists the network interfaces of a Linux host as one record
// each: identity (PCI, USB or virtual; vendor, device and subsystem IDs with
// their pci.ids names), drivers, firmware, the Ethernet link, queues, NUMA
// placement, the PCI function's IRQs and SR-IOV relations, a virtio_net
// interface's virtio feature bits and an SR-IOV PF's VF settings (rate
// caps, VLAN, trust). ReadPlatform says whether the host is a virtual
// machine, and whose.
//
// Every read goes through a root: the live host ("/"), or the directory of an
// unpacked snapshot (see package snapshot), with the same code. On the live
// host the ethtool answers come from the kernel's SIOCETHTOOL ioctls; in a
// snapshot from ethtool/IFACE.json (see EthtoolAnswers). The VF settings
// come from rtnetlink on the live host and from netlink/IFACE.json in a
// snapshot (see NetlinkAnswers).
//
// Nothing here fails because one file is missing, unreadable or malformed:
// the field stays at its zero value and NIC.Missing names it with the reason.
// The package never prints, never exits and never touches the network.
//
// A snapshot is read as untrusted input: a symlink that leaves the snapshot
// directory is not followed, a FIFO or device in place of a file is not
// opened (nothing blocks on it), and control characters in the names it
// holds are dropped.
//
// Every error the package returns starts with "nicinfo: " once. A missing
// interface, file or pci.ids matches os.ErrNotExist (ErrNoInterface,
// ErrNoAnswers and ErrNoPCIIDs do too); a read the system denies, or one
// refused because the file leaves the snapshot or is not a regular file,
// matches os.ErrPermission.
package nicinfo
