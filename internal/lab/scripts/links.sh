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
exit 0
