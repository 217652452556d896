# Defined before every lab script (lab.Prelude).
# sec NAME CMD [ARGS]: run CMD; print its stdout, stderr and exit status between
# markers that lab.Sections parses.  CMD's stderr is held in a file of this
# shell's own (mktemp, removed by the EXIT trap; a script that sets its own EXIT
# trap must remove "$_sec_err" too), so shells running at once (host-side tests
# of the prelude, parallel go test runs) cannot read each other's; one script
# runs one section at a time.
_sec_err=$(mktemp "${TMPDIR:-/tmp}/nicdiag-sec.XXXXXX") || exit 125
trap 'rm -f "$_sec_err"' EXIT
sec() {
  local name=$1 rc; shift
  printf '@@@SECTION %s\n' "$name"
  "$@" 2>"$_sec_err"; rc=$?
  printf '\n@@@STDERR %s\n' "$name"
  cat "$_sec_err"
  printf '\n@@@END %s rc=%d\n' "$name" "$rc"
}
# netfacts: one line per network interface with what the kernel says about it
# (the ground truth the tests hold nicdiag's answers against):
#   NAME fn=PCI-FUNCTION pcidrv=.. netdrv=.. vendor=.. device=.. msi=N,N,.. irq=N
#   link=SPEED/WIDTH/MAXSPEED/MAXWIDTH (or none) physfn=.. vfs=..,..
netfacts() {
  local p n dev fn v
  for p in /sys/class/net/*; do
    n=${p##*/}; [ "$n" = lo ] && continue
    [ -e "$p/device" ] || { echo "$n fn=none"; continue; }
    dev=$(readlink -f "$p/device")
    # virtio's netdev hangs off virtioN; the PCI function is its parent
    fn=$dev; case ${fn##*/} in virtio*) fn=${fn%/*};; esac
    printf '%s fn=%s pcidrv=%s netdrv=%s vendor=%s device=%s' "$n" "${fn##*/}" \
      "$(basename "$(readlink "$fn/driver")")" "$(basename "$(readlink "$dev/driver")")" \
      "$(cat "$fn/vendor")" "$(cat "$fn/device")"
    printf ' msi=%s' "$(ls "$fn/msi_irqs" 2>/dev/null | sort -n | tr '\n' , | sed 's/,$//')"
    printf ' irq=%s' "$(cat "$fn/irq")"
    if [ -e "$fn/current_link_speed" ]; then
      printf ' link=%s/%s/%s/%s' "$(cut -d' ' -f1 "$fn/current_link_speed")" "$(cat "$fn/current_link_width")" \
        "$(cut -d' ' -f1 "$fn/max_link_speed")" "$(cat "$fn/max_link_width")"
    else printf ' link=none'; fi
    printf ' physfn=%s' "$([ -e "$fn/physfn" ] && basename "$(readlink "$fn/physfn")")"
    printf ' vfs=%s' "$(for v in "$fn"/virtfn*; do [ -e "$v" ] && basename "$(readlink "$v")"; done | sort | tr '\n' , | sed 's/,$//')"
    printf ' totalvfs=%s\n' "$(cat "$fn/sriov_totalvfs" 2>/dev/null)"
  done
}
