#!/bin/bash
# build.sh - fetch everything the nicdiag QEMU lab needs from Debian's archive into
# the lab cache and build the guest (PVH vmlinux + uncompressed initramfs).
# Idempotent; needs root only for `apt-get` (nothing is installed on the host:
# packages are fetched with `apt-get download` and unpacked with `dpkg-deb -x`,
# apt's lists live in the cache, /etc/apt is untouched).
#
# Cache: $NICDIAG_LAB_CACHE, else $XDG_CACHE_HOME/nicdiag-lab, else /var/tmp/nicdiag-lab.
#   ./build.sh            # QEMU from bookworm-backports (10.x, has -device igb)
#   LAB_REBUILD=1 ./build.sh       # only rebuild the initramfs (e.g. after editing guest/init)
set -euo pipefail
LAB=$(cd "$(dirname "$0")" && pwd)
if [ -n "${NICDIAG_LAB_CACHE:-}" ]; then C=$NICDIAG_LAB_CACHE
elif [ -n "${XDG_CACHE_HOME:-}" ]; then C=$XDG_CACHE_HOME/nicdiag-lab
else C=/var/tmp/nicdiag-lab; fi
mkdir -p "$C/debs" "$C/apt/lists/partial" "$C/apt/archives/partial" "$C/apt/sources.list.d"
LAB_QEMU=${LAB_QEMU:-backports}
log() { echo "build: $*" >&2; }

# ---- private apt configuration (does not touch /etc/apt) --------------------
cat > "$C/apt/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-backports main
SRC
APTO=(-o Dir::Etc::sourcelist="$C/apt/sources.list" -o Dir::Etc::sourceparts="$C/apt/sources.list.d"
      -o Dir::State::Lists="$C/apt/lists" -o Dir::Cache="$C/apt" -o APT::Sandbox::User=root
      -o Debug::NoLocking=1)
if [ -z "${LAB_REBUILD:-}" ]; then
  if [ -z "$(find "$C/apt/lists" -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
    log "apt-get update (private lists in cache/apt)"
    apt-get "${APTO[@]}" -q update >/dev/null
  fi
fi

download() {  # download pkg[=ver] ... into cache/debs unless already there
  local need=()
  for p in "$@"; do
    local n=${p%%=*}
    ls "$C/debs/${n}_"*.deb >/dev/null 2>&1 || need+=("$p")
  done
  [ ${#need[@]} -eq 0 ] && return 0
  log "apt-get download ${need[*]}"
  (cd "$C/debs" && apt-get "${APTO[@]}" -q download "${need[@]}" >/dev/null)
}
deb_of() { ls "$C/debs/${1}_"*.deb | sort -V | tail -1; }
# kmod picks its applet from argv[0]: run it through a "depmod" symlink
depmod_() {
  if command -v depmod >/dev/null; then depmod "$@"; return; fi
  ln -sf "$C/kmod/bin/kmod" "$C/kmod/depmod"
  LD_LIBRARY_PATH="$C/kmod/lib/x86_64-linux-gnu:$C/kmod/usr/lib/x86_64-linux-gnu" "$C/kmod/depmod" "$@"
}

if [ -z "${LAB_REBUILD:-}" ]; then
  # ---- kernel ---------------------------------------------------------------
  KPKG=$(apt-cache "${APTO[@]}" depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  [ -n "$KPKG" ] || { log "cannot resolve linux-image-amd64"; exit 1; }
  KMOD="kmod libkmod2 liblzma5 libzstd1 libssl3"
  download "$KPKG" busybox-static $KMOD
  KVER=${KPKG#linux-image-}
  # depmod from Debian's kmod with its libraries (a fresh host may not have kmod)
  rm -rf "$C/kmod"; mkdir -p "$C/kmod"
  for p in $KMOD; do dpkg-deb -x "$(deb_of "$p")" "$C/kmod"; done
  if [ ! -d "$C/kernel/lib/modules/$KVER" ]; then
    rm -rf "$C/kernel"; mkdir -p "$C/kernel"
    dpkg-deb -x "$(deb_of "$KPKG")" "$C/kernel"
    depmod_ -b "$C/kernel" "$KVER"
  fi
  rm -rf "$C/busybox"; mkdir -p "$C/busybox"; dpkg-deb -x "$(deb_of busybox-static)" "$C/busybox"
  cp "$C/kernel/boot/vmlinuz-$KVER" "$C/vmlinuz"
  # uncompressed ELF vmlinux: QEMU boots it through the PVH entry point, which skips
  # the real-mode setup and the XZ decompression (~6 s under TCG)
  off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$C/vmlinuz" | head -1 | cut -d: -f1)
  [ -n "$off" ] || { log "no XZ stream in vmlinuz"; exit 1; }
  # xz complains about the data after the stream; the ELF magic check below is what counts
  # (busybox's xzcat lacks the x86 BCJ filter the kernel uses: xz-utils or python3)
  if command -v xz >/dev/null; then
    tail -c +$((off + 1)) "$C/vmlinuz" | xz -dc > "$C/vmlinux" 2>/dev/null || true
  else
    tail -c +$((off + 1)) "$C/vmlinuz" | python3 -c 'import lzma, sys
sys.stdout.buffer.write(lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(sys.stdin.buffer.read()))' > "$C/vmlinux" ||
      { log "need xz (xz-utils) or python3 to unpack the kernel"; exit 1; }
  fi
  [ "$(head -c 4 "$C/vmlinux" | od -An -c | tr -d ' ')" = '177ELF' ] || { log "vmlinux extraction failed"; exit 1; }
  echo "$KVER" > "$C/kver"

  # ---- QEMU (unpacked, run with LD_LIBRARY_PATH; host keeps its own qemu if any)
  if [ ! -x "$C/qemu/usr/bin/qemu-system-x86_64" ]; then
    TGT=(); [ "$LAB_QEMU" = backports ] && TGT=(-t bookworm-backports)
    # full dependency closure minus what this (Debian 12) host already has
    mapfile -t QP < <(apt-get "${APTO[@]}" "${TGT[@]}" install -s --no-install-recommends \
        qemu-system-x86 qemu-system-common qemu-system-data seabios ipxe-qemu 2>/dev/null |
        awk '/^Inst /{v=$3; if ($3 ~ /^\[/) v=$4; gsub(/[()]/,"",v); print $2"="v}')
    [ ${#QP[@]} -gt 0 ] || { log "apt could not resolve qemu-system-x86"; exit 1; }
    # host may already have some of these installed: always fetch the qemu set itself
    for p in qemu-system-x86 qemu-system-common qemu-system-data seabios ipxe-qemu; do
      printf '%s\n' "${QP[@]}" | grep -q "^$p=" || QP+=("$p")
    done
    download "${QP[@]}"
    rm -rf "$C/qemu"; mkdir -p "$C/qemu"
    for p in "${QP[@]}"; do dpkg-deb -x "$(deb_of "${p%%=*}")" "$C/qemu"; done
  fi
  QLD="$C/qemu/usr/lib/x86_64-linux-gnu:$C/qemu/lib/x86_64-linux-gnu"
  if LD_LIBRARY_PATH=$QLD ldd "$C/qemu/usr/bin/qemu-system-x86_64" | grep -q 'not found'; then
    LD_LIBRARY_PATH=$QLD ldd "$C/qemu/usr/bin/qemu-system-x86_64" | grep 'not found' >&2
    log "QEMU has unresolved libraries"; exit 1
  fi
  LD_LIBRARY_PATH=$QLD "$C/qemu/usr/bin/qemu-system-x86_64" --version | head -1 >&2

  # ---- guest userland tools (ethtool, lspci, iproute2 ip/ss) ------------------
  TOOLS="ethtool pciutils libpci3 pci.ids iproute2 libmnl0 libbpf1 libelf1 libcap2 libbsd0 libmd0 libkmod2 bash libtinfo6"
  download $TOOLS
  rm -rf "$C/tools"; mkdir -p "$C/tools"
  for p in $TOOLS; do
    dpkg-deb -x "$(deb_of "$p")" "$C/tools"
  done
fi

# ---- initramfs ----------------------------------------------------------------
KVER=$(cat "$C/kver")
R=$C/initramfs-root
rm -rf "$R"; mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,lib64,lib/x86_64-linux-gnu,proc,sys,dev,run,tmp,mnt/host,etc,root,lab/bin,usr/share/misc,var}
ln -s ../run "$R/var/run"
cp "$C/busybox/bin/busybox" "$R/bin/busybox"
for a in $("$R/bin/busybox" --list); do [ "$a" = busybox ] || ln -sf busybox "$R/bin/$a"; done
# real tools (dynamically linked; their libs are copied below)
cp "$C/tools/sbin/ethtool" "$C/tools/usr/bin/lspci" "$C/tools/usr/bin/setpci" "$R/usr/sbin/"
cp "$C/tools/bin/ip" "$C/tools/bin/ss" "$C/tools/sbin/tc" "$C/tools/sbin/devlink" "$C/tools/usr/bin/nstat" "$R/usr/sbin/"
cp "$C/tools/bin/bash" "$R/bin/bash"
cp "$C/tools/usr/share/misc/pci.ids" "$R/usr/share/misc/pci.ids"
TLD="$C/tools/usr/lib/x86_64-linux-gnu:$C/tools/lib/x86_64-linux-gnu"
for b in "$R"/usr/sbin/* "$R/bin/bash"; do
  LD_LIBRARY_PATH=$TLD ldd "$b" | awk '$3 ~ /^\//{print $3} $1 ~ /^\/lib64\//{print $1}'
done | sort -u | while read -r lib; do
  case $lib in /lib64/*) cp -L "$lib" "$R/lib64/";; *) cp -L "$lib" "$R/lib/x86_64-linux-gnu/";; esac
done
LD_LIBRARY_PATH=$TLD ldd "$R"/usr/sbin/* "$R/bin/bash" | grep 'not found' && { log "guest tool libs missing"; exit 1; }
# kernel modules: NIC drivers + 9p + helpers, with their dependencies; the
# host audit's (a VXLAN device, bridge netfilter, connection tracking fed by
# tc's ct action on lo; sock_diag for the run verdict's flows, autoloaded on a real host)
MODS="e1000e e1000 igb igbvf e100 atl1c r8169 8139cp 8139too ne2k-pci pcnet32 tulip virtio_net
      virtio_pci virtio_blk vmxnet3 9p 9pnet_virtio veth bridge 8021q
      vxlan br_netfilter crc32c_generic nf_conntrack act_ct cls_matchall sch_ingress
      inet_diag tcp_diag udp_diag"
K=$C/kernel/lib/modules/$KVER
mkdir -p "$R/lib/modules/$KVER"
for m in $MODS; do
  line=$(grep -E "/${m}\.ko(\.[a-z]+)?:" "$K/modules.dep") || { log "module $m not in kernel $KVER"; continue; }
  for f in ${line/:/}; do mkdir -p "$R/lib/modules/$KVER/$(dirname "$f")"; cp "$K/$f" "$R/lib/modules/$KVER/$f"; done
done
cp "$K/modules.builtin" "$K/modules.builtin.modinfo" "$K/modules.order" "$R/lib/modules/$KVER/"
depmod_ -b "$R" "$KVER"
cp "$LAB/guest/init" "$R/init"; chmod +x "$R/init"
echo lab > "$R/etc/hostname"
echo "root:x:0:0:root:/root:/bin/sh" > "$R/etc/passwd"
(cd "$R" && find . | LC_ALL=C sort | "$C/busybox/bin/busybox" cpio -o -H newc 2>/dev/null) > "$C/initramfs.cpio"
# left uncompressed on purpose: inflating 9 MB of gzip takes ~1 s of TCG time at every boot
log "kernel   $C/vmlinux (PVH ELF) and $C/vmlinuz ($KVER)"
log "initrd   $C/initramfs.cpio ($(du -h "$C/initramfs.cpio" | cut -f1))"
