#!/bin/bash
# run.sh - boot the nicdiag lab VM (QEMU q35, Debian 6.1 kernel, busybox initramfs)
# with a PCIe/NIC topology and run a shell command in the guest (cache: see build.sh).  The command's
# stdout+stderr come back on the host's stdout and run.sh exits with its status.
#
# usage: ./run.sh [options] [--] 'shell command'      ('-' = read the script from stdin)
#   -t TOPO    topology file from topologies/ or a path (default: links)
#   -x ARGS    extra QEMU args (word-split), e.g. -x '-device igb,bus=pcie.0,netdev=...'
#   -f FILE    copy FILE into the guest's /lab/bin (on PATH), repeatable (e.g. the Go binary)
#   -s DIR     share host DIR read-write at /mnt/host in the guest (virtio-9p; adds a PCI device)
#   -a ACCEL   tcg (default) or kvm
#   -c N       vCPUs (default 2)        -m MB   guest RAM (default 512)
#   -M 'mods'  extra modules to modprobe at boot      -n   don't bring NICs up
#   -A 'args'  extra kernel command line              -T S timeout in seconds (default 300)
#   -i         interactive: shell on this terminal (console), no command
#   -k         keep the run directory (console.log, out.raw, initrd)    -q  no timing line on stderr
# Everything runs inside a private network namespace (unshare -n): no traffic can leave this host.
set -euo pipefail
LAB=$(cd "$(dirname "$0")" && pwd)
if [ -n "${NICDIAG_LAB_CACHE:-}" ]; then C=$NICDIAG_LAB_CACHE
elif [ -n "${XDG_CACHE_HOME:-}" ]; then C=$XDG_CACHE_HOME/nicdiag-lab
else C=/var/tmp/nicdiag-lab; fi
TOPO=links ACCEL=tcg CPUS=2 MEM=512 TIMEOUT=300 SHARE= INTER=0 KEEP=0 QUIET=0 IFUP=1 MODS= APPEND=
FILES=(); EXTRA=()
while getopts "t:x:f:s:a:c:m:M:A:T:iknqh" o; do
  case $o in
    t) TOPO=$OPTARG;; x) read -r -a _x <<<"$OPTARG"; EXTRA+=("${_x[@]}");; f) FILES+=("$OPTARG");;
    s) SHARE=$(cd "$OPTARG" && pwd);; a) ACCEL=$OPTARG;; c) CPUS=$OPTARG;; m) MEM=$OPTARG;;
    M) MODS=$OPTARG;; A) APPEND=$OPTARG;; T) TIMEOUT=$OPTARG;; i) INTER=1;; k) KEEP=1;; n) IFUP=0;; q) QUIET=1;;
    h|*) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2;;
  esac
done
shift $((OPTIND-1))
[ -f "$C/initramfs.cpio" ] || { echo "run: no image, run ./build.sh first" >&2; exit 2; }
if [ -f "$TOPO" ]; then TF=$TOPO; else TF=$LAB/topologies/$TOPO; fi
[ -f "$TF" ] || { echo "run: no topology $TOPO (have: $(ls "$LAB/topologies" | tr '\n' ' '))" >&2; exit 2; }
QARGS=(); . "$TF"
KIMG=vmlinux; [ "${LAB_BOOT:-pvh}" = bzimage ] && KIMG=vmlinuz   # PVH entry: ~6 s faster under TCG

RUN=$(mktemp -d /tmp/nic-lab.XXXXXX)
cleanup() { [ "$KEEP" = 1 ] || rm -rf "$RUN"; }
trap cleanup EXIT
# ---- per-run overlay cpio: /lab/cmd.sh, /lab/env, /lab/bin/* --------------------
mkdir -p "$RUN/ov/lab/bin"
if [ "$INTER" = 1 ]; then echo true > "$RUN/ov/lab/cmd.sh"
elif [ "${1:-}" = - ]; then cat > "$RUN/ov/lab/cmd.sh"
else [ $# -gt 0 ] || { echo "run: no command given (use -i for a shell)" >&2; exit 2; }; printf '%s\n' "$*" > "$RUN/ov/lab/cmd.sh"; fi
for f in "${FILES[@]}"; do cp "$f" "$RUN/ov/lab/bin/"; chmod +x "$RUN/ov/lab/bin/$(basename "$f")"; done
{ echo "LAB_IFUP=$IFUP"; echo "LAB_MODULES='$MODS'"; echo "LAB_INTERACTIVE=$INTER"
  [ -n "$SHARE" ] && echo "LAB_SHARE=1"; echo "LAB_TOPOLOGY=$(basename "$TF")"; } > "$RUN/ov/lab/env"
(cd "$RUN/ov" && find . | "$C/busybox/bin/busybox" cpio -o -H newc 2>/dev/null) > "$RUN/overlay.cpio"
# Linux unpacks concatenated archives; an uncompressed one must start 4-byte aligned
bsz=$(stat -c %s "$C/initramfs.cpio")
{ cat "$C/initramfs.cpio"; head -c $(( (4 - bsz % 4) % 4 )) /dev/zero; cat "$RUN/overlay.cpio"; } > "$RUN/initrd"

# ---- QEMU command line ------------------------------------------------------------
export LD_LIBRARY_PATH=$C/qemu/usr/lib/x86_64-linux-gnu:$C/qemu/lib/x86_64-linux-gnu
Q=("$C/qemu/usr/bin/qemu-system-x86_64" -L "$C/qemu/usr/share/qemu" -L "$C/qemu/usr/share/seabios"
   -L "$C/qemu/usr/lib/ipxe/qemu" -nodefaults -no-user-config -display none -vga none -no-reboot
   -machine q35 -accel "$ACCEL" -smp "$CPUS" -m "$MEM"
   -kernel "$C/$KIMG" -initrd "$RUN/initrd"
   -append "console=ttyS0 panic=-1 quiet loglevel=3 $APPEND")
if [ "$ACCEL" = kvm ]; then Q+=(-cpu host); else Q+=(-cpu max); fi
if [ "$INTER" = 1 ]; then Q+=(-serial mon:stdio); else Q+=(-monitor none -serial "file:$RUN/console.log"); fi
Q+=(-serial "file:$RUN/out.raw")
[ -n "$SHARE" ] && Q+=(-virtfs "local,path=$SHARE,mount_tag=host,security_model=none,id=hostshare")
Q+=("${QARGS[@]}" "${EXTRA[@]}")
printf '%q ' "${Q[@]}" > "$RUN/qemu.cmd"
# tap backends (multi-queue virtio-net) are pre-created, up, inside the private netns
TAPS=$(printf '%s\n' "${Q[@]}" | grep -o 'ifname=labtap[0-9]*' | cut -d= -f2 | sort -u | tr '\n' ' ' || true)
cat > "$RUN/ns.sh" <<NS
ip link set lo up
for t in $TAPS; do ip tuntap add dev \$t mode tap multi_queue && ip link set \$t up; done
exec timeout --foreground -k 5 $TIMEOUT $(cat "$RUN/qemu.cmd")
NS
: > "$RUN/out.raw"
if [ "$INTER" = 1 ]; then exec unshare -n bash "$RUN/ns.sh"; fi

t0=$(date +%s.%N)
unshare -n bash "$RUN/ns.sh" > "$RUN/qemu.stderr" 2>&1 &
qpid=$!
tready=
while kill -0 $qpid 2>/dev/null; do
  if [ -z "$tready" ] && grep -q '^===LAB-BEGIN' "$RUN/out.raw" 2>/dev/null; then tready=$(date +%s.%N); fi
  sleep 0.05
done
qrc=0; wait $qpid || qrc=$?
t2=$(date +%s.%N)
end=$(grep -a '^===LAB-END' "$RUN/out.raw" | tail -1 || true)
# print what lies between the BEGIN line and the "\n===LAB-END" line (minus that one newline)
awk 'f && /^===LAB-END/ {if (held) printf "%s", prev; exit}
     f {if (held) print prev; prev=$0; held=1}
     /^===LAB-BEGIN/ {f=1}
     END {if (held && !/^===LAB-END/) print prev}' "$RUN/out.raw"
if [ -z "$end" ]; then
  KEEP=1
  echo "run: guest did not finish (qemu rc=$qrc); run dir $RUN" >&2
  tail -n 20 "$RUN/qemu.stderr" >&2 || true; tail -n 30 "$RUN/console.log" >&2 || true
  exit 125
fi
rc=$(sed 's/.*rc=\([0-9]*\).*/\1/' <<<"$end")
gup=$(sed -n 's/^===LAB-BEGIN uptime=\([0-9.]*\).*/\1/p' "$RUN/out.raw" | head -1)
[ "$QUIET" = 1 ] || awk -v a="$t0" -v b="${tready:-$t2}" -v c="$t2" -v g="$gup" -v acc="$ACCEL" -v t="$(basename "$TF")" \
  'BEGIN{printf "lab: topology=%s accel=%s boot-to-shell %.2fs (host wall; guest uptime %ss), total %.2fs\n", t, acc, b-a, g, c-a}' >&2
[ "$KEEP" = 1 ] && echo "lab: run dir $RUN" >&2
exit "$rc"
