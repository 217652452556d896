# Boot "links": e1000e behind a 2.5 GT/s x1 port, virtio-net (4 queue pairs)
# behind an 8 GT/s x4 port, vmxnet3 behind a 16 GT/s x16 port, e1000 on the
# root bus.  What the kernel says, then what nicdiag says.
sec facts netfacts
sec interrupts cat /proc/interrupts
sec list nicdiag list --all --json
sec list-text nicdiag list --all
sec check nicdiag check --json
for p in /sys/class/net/*; do
  n=${p##*/}; [ "$n" = lo ] || sec "show-$n" nicdiag show --json "$n"
  [ "$n" = lo ] || sec "explain-$n" nicdiag explain --json "$n"
done
exit 0
