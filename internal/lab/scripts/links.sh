# Boot "links": e1000e behind a 2.5 GT/s x1 port, virtio-net (4 queue pairs)
# behind an 8 GT/s x4 port, vmxnet3 behind a 16 GT/s x16 port, e1000 and a
# single-queue virtio-net on the root bus.  What the kernel says, then what nicdiag says.
sec facts netfacts
sec interrupts cat /proc/interrupts
sec list nicdiag list --all --json
sec list-text nicdiag list --all
sec check nicdiag check --json
# What says VM (DMI, the CPU flag, the vCPU count) and each virtio device's
# negotiated features (bit 22 is VIRTIO_NET_F_MQ): the ground truth of
# nic.emulated and nic.virtio_single_queue.
sec platform sh -c 'cat /sys/class/dmi/id/sys_vendor; grep -c ^processor /proc/cpuinfo; grep -m1 -ow hypervisor /proc/cpuinfo'
sec virtio sh -c 'for d in /sys/bus/virtio/devices/*; do
  [ -e "$d/features" ] && echo "$(basename "$(dirname "$(readlink -f "$d")")") $(cat "$d/features")"; done'
for p in /sys/class/net/*; do
  n=${p##*/}; [ "$n" = lo ] || sec "show-$n" nicdiag show --json "$n"
  [ "$n" = lo ] || sec "explain-$n" nicdiag explain --json "$n"
done
# aerfacts: one line per PCI function with AER statistics files, the
# kernel's totals ("ADDR cor=N nonfatal=N fatal=N"); nicdiag reads them
# into each path end's aer.
aerfacts() {
  for d in /sys/bus/pci/devices/*; do
    [ -e "$d/aer_dev_correctable" ] || continue
    printf '%s cor=%s nonfatal=%s fatal=%s\n' "${d##*/}" \
      "$(awk '$1=="TOTAL_ERR_COR"{print $2}' "$d/aer_dev_correctable")" \
      "$(awk '$1=="TOTAL_ERR_NONFATAL"{print $2}' "$d/aer_dev_nonfatal")" \
      "$(awk '$1=="TOTAL_ERR_FATAL"{print $2}' "$d/aer_dev_fatal")"
  done
}
sec aer aerfacts
# The host audit (audit_test.go), after everything above so that it sees
# the guest as it booted: the vmxnet3's RX ring cut to 64, a VXLAN device
# routed by destination at an inner MTU of 1500 (the NICs carry 1500), a bridge with br_netfilter loaded,
# and a connection-tracking table of 64 entries that tc's ct action on lo
# fills with 200 UDP flows to local ports.
sec audit-mods sh -c 'for m in vxlan br_netfilter crc32c_generic nf_conntrack act_ct cls_matchall sch_ingress; do
  modprobe "$m" || { echo "missing $m"; exit 1; }; done; echo ok'
ethtool -G eth2 rx 64 || echo "lab: ethtool -G eth2 rx 64 failed"
sec audit-ring ethtool -g eth2
modprobe vxlan
ip link add vx0 type vxlan id 42 dstport 4789 && ip link set vx0 mtu 1500 && ip link set vx0 up
sec audit-vxlan ip -d link show vx0
sec audit-vxlan-k ethtool -k vx0
modprobe br_netfilter && ip link add br0 type bridge && ip link set br0 up
modprobe crc32c_generic; modprobe nf_conntrack && echo 64 > /proc/sys/net/netfilter/nf_conntrack_max
modprobe act_ct; modprobe cls_matchall; modprobe sch_ingress
tc qdisc add dev lo clsact && tc filter add dev lo ingress protocol ip matchall action ct commit || echo "lab: tc ct failed"
ip link set lo up
for i in $(seq 1 200); do echo x 2>/dev/null > /dev/udp/127.0.0.1/$((20000 + i)); done
sec audit-ct cat /proc/sys/net/netfilter/nf_conntrack_count /proc/sys/net/netfilter/nf_conntrack_max
sec audit-ctstat cat /proc/net/stat/nf_conntrack
sec audit-check nicdiag check --json
sec audit-show-vx0 nicdiag show --json vx0
sec audit-show-eth2 nicdiag show --json eth2
exit 0
