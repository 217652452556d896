# Boot "igb": 82576 behind a 2.5 GT/s x1 port.  Before SR-IOV: identity,
# MSI-X queue vectors, rings, offloads and interrupt moderation; then two VFs
# through sriov_numvfs, bound to igbvf; then a transmit cap on VF 0 set and
# removed.
sec facts0 netfacts
sec interrupts0 cat /proc/interrupts
sec list0 nicdiag list --all --json
sec show0 nicdiag show --json eth0
sec monitor0 nicdiag monitor --json --duration 2s
# Rings: igb's smallest RX ring (80 descriptors) holds 0.98 ms of 1518-byte
# frames at 1 Gb/s, under nic.ring_small's 1 ms; its default 256 holds 3.1 ms.
# ethtool -G resets the port: wait (max 6 s) for carrier before each check.
carrier() {
  local i=0 c
  while [ $i -lt 60 ]; do
    c=0; read -r c < /sys/class/net/eth0/carrier 2>/dev/null; [ "$c" = 1 ] && return 0
    sleep 0.1; i=$((i+1))
  done
  echo "lab: no carrier on eth0 after ethtool -G"
}
ethtool -G eth0 rx 80 || echo "lab: ethtool -G eth0 rx 80 failed"
carrier
sec ringeth1 ethtool -g eth0
sec ringshow1 nicdiag show --json eth0
sec ringcheck1 nicdiag check --json eth0
ethtool -G eth0 rx 256 || echo "lab: ethtool -G eth0 rx 256 failed"
carrier
sec ringeth2 ethtool -g eth0
sec ringshow2 nicdiag show --json eth0
sec ringcheck2 nicdiag check --json eth0
# Offloads and interrupt moderation: GRO off and rx-usecs 0 on eth0 raise
# nic.offload_off and nic.coalesce_off (info: an emulated 1 Gb/s NIC); put
# back as they were, both go.  ethtool -k / -c say what the driver took.
rxu=$(ethtool -c eth0 | sed -n 's/^rx-usecs: *//p')
sec offl-set bash -c 'ethtool -K eth0 gro off && ethtool -C eth0 rx-usecs 0'
sec offl-k ethtool -k eth0
sec offl-c ethtool -c eth0
sec offl-list nicdiag list --json
sec offl-check nicdiag check --json
sec offl-undo bash -c "ethtool -K eth0 gro on && ethtool -C eth0 rx-usecs ${rxu:-3}"
sec offl-after nicdiag check --json
# The Ethernet link (ethlink_test.go): EEE (82576: none), pause, the
# partner's modes as ethtool prints them; pause turned off and back; then
# the carrier taken down 12 times with ip link (igb_close drops the
# carrier), which nic.link_flapping must count.
sec eee0 ethtool --show-eee eth0
sec pause0 ethtool -a eth0
sec linkset0 ethtool eth0
sec ethshow0 nicdiag show --json eth0
ethtool -A eth0 autoneg off rx off tx off || echo "lab: ethtool -A eth0 off failed"
carrier
sec pause1 ethtool -a eth0
sec ethshow1 nicdiag show --json eth0
ethtool -A eth0 autoneg on rx on tx on || echo "lab: ethtool -A eth0 on failed"
carrier
sec carrier0 cat /sys/class/net/eth0/carrier_changes /sys/class/net/eth0/carrier_down_count
sec flapcheck0 nicdiag check --json eth0
for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do
  ip link set eth0 down; ip link set eth0 up; carrier
done
sec carrier1 cat /sys/class/net/eth0/carrier_changes /sys/class/net/eth0/carrier_down_count
sec flapcheck1 nicdiag check --json eth0
# no udev in the guest: load the VF driver before the VFs appear
modprobe igbvf
pf=$(readlink -f /sys/class/net/eth0/device)
echo 2 > "$pf/sriov_numvfs" || echo "lab: sriov_numvfs failed"
i=0; while [ $i -lt 50 ]; do
  n=0; for v in "$pf"/virtfn*/net/*; do [ -e "$v" ] && n=$((n+1)); done
  [ $n -ge 2 ] && break; sleep 0.1; i=$((i+1))
done
sec facts1 netfacts
sec interrupts1 cat /proc/interrupts
sec list1 nicdiag list --all --json
sec check1 nicdiag check --json
# A PF-set transmit cap on VF 0 (igb accepts it only with the PF's link up,
# which the VF reset took down for a moment): nic.vf_rate_limited, live and
# from a snapshot of the same state; then the cap removed.
i=0; while [ $i -lt 100 ]; do [ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" = 1 ] && break; sleep 0.1; i=$((i+1)); done
sec setrate ip link set eth0 vf 0 max_tx_rate 100
sec iplink2 ip link show eth0
sec check2 nicdiag check --json
sec snapcheck2 sh -c 'nicdiag snapshot -o /tmp/snap2 >/dev/null && nicdiag --root /tmp/snap2 check --json'
sec unsetrate ip link set eth0 vf 0 max_tx_rate 0
sec check3 nicdiag check --json
exit 0
