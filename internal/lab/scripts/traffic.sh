# Boot "traffic": two igb joined by a QEMU hub; eth1 moves into netns "peer"
# so ICMP really crosses the emulated wire (TCP bulk over the hub stalls, see
# README).  TestTraffic: nicdiag monitor watches eth0's queue IRQs and NET_RX.
# TestRunVerdict (the vd-* sections at the end): the run verdict of a
# monitored ping flood against the driver's own counters.
#
# IPv6 off in both namespaces (before eth1 enters "peer", whose new devices
# take its defaults): no router solicitations, MLD or DAD frames cross the
# wire, so eth0 carries only the pings and the odd ARP revalidation.
echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6
ip netns add peer
ip netns exec peer sh -c 'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6'
ip link set eth1 netns peer
ip addr add 192.0.2.1/24 dev eth0
ip netns exec peer ip link set lo up
ip netns exec peer ip link set eth1 up
ip netns exec peer ip addr add 192.0.2.2/24 dev eth1
ping -c 3 -w 5 192.0.2.2 >/dev/null || echo "lab: peer unreachable"
sec facts netfacts
sec interrupts0 cat /proc/interrupts
sec softirqs0 cat /proc/softirqs
# pings every 10 ms for as long as the monitor window lasts (however slow the
# emulation), then SIGINT makes ping print its statistics
ping -i 0.01 -w 60 -q 192.0.2.2 >/tmp/bg-ping 2>&1 &
bg=$! t0=$(date +%s)
sec monitor nicdiag monitor --json --duration 3s
while [ $(( $(date +%s) - t0 )) -lt 5 ]; do sleep 0.2; done   # at least ~4 s of traffic
kill -INT $bg; wait $bg
sec interrupts1 cat /proc/interrupts
sec softirqs1 cat /proc/softirqs
sec bg-ping cat /tmp/bg-ping
# the command's output passes through nicdiag's stdout: keep it out of the JSON
sec monitor-cmd nicdiag monitor --json -- sh -c 'ping -c 200 -i 0.01 -q 192.0.2.2 > /tmp/cmd-ping'
sec cmd-ping cat /tmp/cmd-ping
sec monitor-cmd-text nicdiag monitor -- ping -c 100 -i 0.01 -q 192.0.2.2
#
# TestRunVerdict.  Ground truth before and after: the interface counters
# (sysfs) and the driver's ethtool statistics (per queue, and the emulated
# 82576's own good-octet counters, which include the FCS).  The monitor's
# first reading is taken before its command starts, and the command sleeps
# 1.2 s (over two 500 ms intervals) after ping ends, so every ping falls
# inside the record; /proc/uptime around ping gives its duration.
vd_stats() {   # builtins only: the readings sit close together
  local f v
  for f in rx_packets tx_packets rx_bytes tx_bytes; do
    read -r v < /sys/class/net/eth0/statistics/$f; echo "$f: $v"
  done
  read -r v < /sys/class/net/eth0/speed; echo "speed: $v"
}
sec vd-sysfs0 vd_stats
sec vd-ethtool0 ethtool -S eth0
sec vd-monitor nicdiag monitor --json --interval 500ms --record /tmp/run.jsonl eth0 -- \
  sh -c '{ cat /proc/uptime; ping -i 0.002 -s 1400 -w 4 -q 192.0.2.2; cat /proc/uptime; } > /tmp/vd-ping 2>&1; sleep 1.2'
sec vd-ethtool1 ethtool -S eth0
sec vd-sysfs1 vd_stats
sec vd-ping cat /tmp/vd-ping
sec vd-record cat /tmp/run.jsonl
exit 0
