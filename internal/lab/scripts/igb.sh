# Boot "igb": 82576 behind a 2.5 GT/s x1 port.  Before SR-IOV: identity and
# MSI-X queue vectors; then two VFs through sriov_numvfs, bound to igbvf.
sec facts0 netfacts
sec interrupts0 cat /proc/interrupts
sec list0 nicdiag list --all --json
sec show0 nicdiag show --json eth0
sec monitor0 nicdiag monitor --json --duration 2s
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
