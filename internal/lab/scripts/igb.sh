# Boot "igb": 82576 behind a 2.5 GT/s x1 port.  Before SR-IOV: identity,
# MSI-X queue vectors, offloads and interrupt moderation; then two VFs
# through sriov_numvfs, bound to igbvf.
sec facts0 netfacts
sec interrupts0 cat /proc/interrupts
sec list0 nicdiag list --all --json
sec show0 nicdiag show --json eth0
sec monitor0 nicdiag monitor --json --duration 2s
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
exit 0
