# Boot "traffic": two e1000e joined by a QEMU hub; eth1 moves into netns
# "peer" so ICMP really crosses the emulated wire (TCP bulk over this hub
# stalls, see README).  nicdiag monitor watches eth0's queue IRQs and NET_RX.
ip netns add peer
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
exit 0
