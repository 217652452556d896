#!/usr/bin/env python3
"""Regenerates every snapshot tree in this directory (layout: docs/design.md section 4).

    python3 testdata/snapshots/gen.py            # rm -rf and rewrite every tree
    python3 testdata/snapshots/gen.py NAME ...   # only the named trees

Stdlib only. Each tree is declared below as data plus a few lines of code; real
config-space bytes come from the fixture text copied into src/ (hex rows as
`lspci -xxx`/`-xxxx` prints them). Everything that is not in a source dump is
listed in the tree's README.md (the `notes` of each tree) as reconstructed.

Output is deterministic: no clocks, no randomness, sorted writes. Symlinks are
relative and never leave the snapshot root.
"""

import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "src")

# ---------------------------------------------------------------------------
# PCI config space: parse fixture hex, find and patch capabilities, build new.

SPEED_NEW = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe",
             4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe", 6: "64.0 GT/s PCIe"}


def load_lspci_hex(fname):
    """Returns {"bb:dd.f": bytearray} from an lspci text dump with hex rows."""
    out, dev = {}, None
    with open(os.path.join(SRC, fname), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^([0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ", line)
            if m:
                dev = m.group(1)
                out[dev] = bytearray()
                continue
            m = re.match(r"^\s*([0-9a-f]+): ((?:[0-9a-f]{2} ?){1,16})\s*$", line)
            if m and dev is not None:
                off = int(m.group(1), 16)
                if off != len(out[dev]):
                    raise ValueError("%s %s: hex row %x out of order" % (fname, dev, off))
                out[dev] += bytes.fromhex(m.group(2))
    return {k: v for k, v in out.items() if v}


def rd16(c, o):
    return c[o] | c[o + 1] << 8


def rd32(c, o):
    return c[o] | c[o + 1] << 8 | c[o + 2] << 16 | c[o + 3] << 24


def wr16(c, o, v):
    c[o:o + 2] = (v & 0xFFFF).to_bytes(2, "little")


def wr32(c, o, v):
    c[o:o + 4] = (v & 0xFFFFFFFF).to_bytes(4, "little")


def find_cap(c, cid):
    if len(c) < 64 or not (rd16(c, 6) & 0x10):
        return None
    p, n = c[0x34] & 0xFC, 0
    while p and n < 48 and p + 1 < len(c):
        if c[p] == cid:
            return p
        p, n = c[p + 1] & 0xFC, n + 1
    return None


def find_ext(c, eid):
    p, n = 0x100, 0
    while p and p + 4 <= len(c) and n < 96:
        h = rd32(c, p)
        if h == 0:
            return None
        if h & 0xFFFF == eid:
            return p
        p, n = (h >> 20) & 0xFFC, n + 1
    return None


def set_lnksta(c, speed, width):
    """Patches LnkSta current speed/width, keeping the other status bits."""
    p = find_cap(c, 0x10)
    v = rd16(c, p + 0x12)
    wr16(c, p + 0x12, (v & ~0x03FF) | speed | width << 4)


def pcie_link(c):
    """(cap_speed, cap_width, sta_speed, sta_width, port_type) or None."""
    p = find_cap(c, 0x10)
    if p is None:
        return None
    lc, ls = rd32(c, p + 0x0C), rd16(c, p + 0x12)
    return lc & 0xF, (lc >> 4) & 0x3F, ls & 0xF, (ls >> 4) & 0x3F, (rd16(c, p + 2) >> 4) & 0xF


def sysfs_link(c):
    """The four sysfs link attributes as the kernel (>= 5.2) derives them."""
    cs, cw, ss, sw, _ = pcie_link(c)
    return dict(cur_speed=SPEED_NEW[ss], cur_width=sw, max_speed=SPEED_NEW[cs], max_width=cw)


def cap_pm(pmc=0xC823, pmcsr=0x0008):
    return bytes([0x01, 0]) + pmc.to_bytes(2, "little") + pmcsr.to_bytes(2, "little") + bytes(2)


def cap_msi(is64=True, enabled=False, addr=0, data=0, maskable=False):
    ctl = (0x80 if is64 else 0) | (0x100 if maskable else 0) | (1 if enabled else 0)
    b = bytes([0x05, 0]) + ctl.to_bytes(2, "little") + addr.to_bytes(4, "little")
    if is64:
        b += bytes(4)
    b += data.to_bytes(2, "little") + bytes(2)
    if maskable:
        b += bytes(8)
    return b


def cap_msix(tabsize, bar, table_off, pba_off, enabled=True):
    ctl = (tabsize - 1) | (0x8000 if enabled else 0)
    return (bytes([0x11, 0]) + ctl.to_bytes(2, "little") + (table_off | bar).to_bytes(4, "little")
            + (pba_off | bar).to_bytes(4, "little"))


def cap_ssvid(sv, sd):
    return bytes([0x0D, 0, 0, 0]) + sv.to_bytes(2, "little") + sd.to_bytes(2, "little")


def cap_vpd():
    return bytes([0x03, 0, 0, 0]) + bytes(4)


def cap_pcie(ptype, devcap_mps, devctl_mps, mrrs, cap_speed, cap_width, sta_speed, sta_width,
             port=0, slot=False, dlactive=False, slotclk=True, linkcap2=None, target=None,
             aspm_sup=0x3, l0s=6, l1=6, dllla=False, ver=2, bwnot=False, commclk=True):
    """Builds a PCI Express capability structure (0x3c bytes, version 2 layout)."""
    log2 = {128: 0, 256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
    pcap = ver | ptype << 4 | (0x100 if slot else 0)
    devcap = log2[devcap_mps] | (0x8000 if ptype == 0 else 0)  # RBE
    if ptype == 0:
        devcap |= 6 << 6 | 6 << 9  # L0s/L1 acceptable latency: no limit class 6
    devctl = 0x0010 | log2[devctl_mps] << 5 | log2[mrrs] << 12 | 0x0800  # RlxdOrd, NoSnoop
    lnkcap = (cap_speed | cap_width << 4 | aspm_sup << 10 | l0s << 12 | l1 << 15
              | (0x100000 if dllla else 0) | (0x200000 if bwnot else 0) | port << 24)
    lnkctl = 0x0040 if commclk else 0
    lnksta = sta_speed | sta_width << 4 | (0x1000 if slotclk else 0) | (0x2000 if dlactive else 0)
    b = bytearray(0x3C)
    b[0] = 0x10
    wr16(b, 2, pcap)
    wr32(b, 4, devcap)
    wr16(b, 8, devctl)
    wr32(b, 0x0C, lnkcap)
    wr16(b, 0x10, lnkctl)
    wr16(b, 0x12, lnksta)
    if slot:
        wr32(b, 0x14, 1 << 19 | 0x4B << 7)  # physical slot 1, power limit 75 W
    if linkcap2 is not None:
        wr32(b, 0x2C, linkcap2)
    if target is not None:
        wr16(b, 0x30, target)
    return bytes(b)


def ext_cap(eid, ver, body):
    return (eid, ver, bytes(body))


def ext_aer():
    b = bytearray(0x44)
    wr32(b, 0x0C, 0x00062011)  # UESvrt defaults
    wr32(b, 0x14, 0x00002000)  # CEMsk NonFatalErr
    return ext_cap(0x0001, 1, b[4:])


def ext_dsn(serial):
    return ext_cap(0x0003, 1, serial.to_bytes(8, "little"))


def ext_ari(next_fn):
    return ext_cap(0x000E, 1, bytes([0, next_fn, 0, 0]))


def ext_sriov(initial, total, num, offset, stride, vfdev, enabled):
    b = bytearray(0x3C)
    wr16(b, 4, 0x0009 if enabled else 0)  # VF Enable + VF MSE
    wr16(b, 0x08, initial)
    wr16(b, 0x0A, total)
    wr16(b, 0x0C, num)
    wr16(b, 0x10, offset)
    wr16(b, 0x12, stride)
    wr16(b, 0x16, vfdev)
    wr32(b, 0x18, 0x553)
    wr32(b, 0x1C, 1)
    return ext_cap(0x0010, 1, b)


def build_config(vendor, device, cls, rev, *, sv=0, sd=0, multi=False, bridge=None,
                 command=0x0406, status=0x0010, bars=(), rom=0, irq_line=0xFF, irq_pin=1,
                 caps=(), ext=(), size=256, cacheline=0x10):
    """A config space image. caps: [(offset, bytes)], chained in the order given.
    ext: [(offset, (id, ver, body))]. bridge: (primary, secondary, subordinate)."""
    c = bytearray(4096)
    wr16(c, 0, vendor)
    wr16(c, 2, device)
    wr16(c, 4, command)
    wr16(c, 6, status | (0x10 if caps else 0))
    c[8] = rev
    c[9], c[0xA], c[0xB] = cls & 0xFF, (cls >> 8) & 0xFF, cls >> 16
    c[0xC] = cacheline
    c[0xE] = (1 if bridge else 0) | (0x80 if multi else 0)
    if bridge:
        c[0x18], c[0x19], c[0x1A] = bridge
        wr16(c, 0x1C, 0x00F0)   # I/O base/limit: none
        wr32(c, 0x20, 0x0000FFF0)
        wr32(c, 0x24, 0x0001FFF1)
        wr16(c, 0x3E, 0x0012)   # BridgeCtl SERR+, NoISA-
    else:
        for i, v in enumerate(bars):
            wr32(c, 0x10 + 4 * i, v)
        wr16(c, 0x2C, sv)
        wr16(c, 0x2E, sd)
        wr32(c, 0x30, rom)
    c[0x3C], c[0x3D] = irq_line, irq_pin
    if caps:
        c[0x34] = caps[0][0]
        for i, (off, body) in enumerate(caps):
            c[off:off + len(body)] = body
            c[off + 1] = caps[i + 1][0] if i + 1 < len(caps) else 0
    if size > 0x100 and ext:
        for i, (off, (eid, ver, body)) in enumerate(ext):
            nxt = ext[i + 1][0] if i + 1 < len(ext) else 0
            wr32(c, off, eid | ver << 16 | nxt << 20)
            c[off + 4:off + 4 + len(body)] = body
    return c[:size]


# ---------------------------------------------------------------------------
# Tree writer

def cpumask(cpus, ncpus):
    """A cpumask as the kernel prints it (bitmap_print_to_pagebuf, non-list)."""
    v = 0
    for c in cpus:
        v |= 1 << c
    ndig = (ncpus + 3) // 4
    s = "%0*x" % (ndig, v)
    groups = []
    while len(s) > 8:
        groups.insert(0, s[-8:])
        s = s[:-8]
    groups.insert(0, s)
    return ",".join(groups)


def cpulist(cpus):
    cpus = sorted(set(cpus))
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def parse_cpulist(s):
    out = []
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def modalias(vendor, device, sv, sd, cls):
    return "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (
        vendor, device, sv, sd, cls >> 16, (cls >> 8) & 0xFF, cls & 0xFF)


class Tree:
    def __init__(self, name, source, summary):
        self.name, self.source, self.summary = name, source, summary
        self.files, self.links, self.dirs = {}, {}, set()
        self.notes = []
        self.ncpus = 1

    # primitive writers (paths relative to the snapshot root, no leading "/")
    def file(self, rel, content):
        if isinstance(content, str):
            content = content.encode()
        self.files[rel] = bytes(content)

    def attr(self, rel, value):
        self.file(rel, "%s\n" % value)

    def link(self, rel, target):
        """target is relative to the snapshot root. The relative link text is built the way
        kernfs does it (kernfs_get_target_path): climb from the link's directory to the
        nearest ancestor of the target's *parent*, then descend, so a link to an ancestor
        reads ../../../0000:01:00.0 rather than ../.."""
        ldir = os.path.dirname(rel).split("/")
        tgt = target.split("/")
        common = 0
        while (common < len(ldir) and common < len(tgt) - 1
               and ldir[common] == tgt[common]):
            common += 1
        self.links[rel] = "../" * (len(ldir) - common) + "/".join(tgt[common:])

    def mkdir(self, rel):
        self.dirs.add(rel)

    def note(self, text):
        self.notes.append(text)

    # PCI function
    def pci(self, path, *, vendor, device, cls, rev, sv=0, sd=0, numa=-1, cpus=None, irq=0,
            link=None, config=None, driver=None, msi=(), sriov=None, physfn=None,
            enable=1, extra=None, omit=()):
        bdf = path.split("/")[-1]
        d = "sys/devices/" + path
        cpus = cpus if cpus is not None else list(range(self.ncpus))
        vals = {
            "vendor": "0x%04x" % vendor, "device": "0x%04x" % device,
            "subsystem_vendor": "0x%04x" % sv, "subsystem_device": "0x%04x" % sd,
            "class": "0x%06x" % cls, "revision": "0x%02x" % rev,
            "numa_node": str(numa), "local_cpulist": cpulist(cpus),
            "local_cpus": cpumask(cpus, self.ncpus), "irq": str(irq),
            "modalias": modalias(vendor, device, sv, sd, cls), "enable": str(enable),
        }
        if link:
            for k, f in (("cur_speed", "current_link_speed"), ("cur_width", "current_link_width"),
                         ("max_speed", "max_link_speed"), ("max_width", "max_link_width")):
                if link.get(k) is not None:
                    vals[f] = str(link[k])
        if sriov:
            vals.update({"sriov_totalvfs": str(sriov["total"]), "sriov_numvfs": str(sriov["num"]),
                         "sriov_offset": str(sriov["offset"]), "sriov_stride": str(sriov["stride"]),
                         "sriov_vf_device": "%x" % sriov["vfdev"], "sriov_drivers_autoprobe": "1"})
        vals.update(extra or {})
        for k, v in vals.items():
            if k not in omit:
                self.attr(d + "/" + k, v)
        if config is not None:
            self.file(d + "/config", bytes(config))
        self.link("sys/bus/pci/devices/" + bdf, d)
        self.link(d + "/subsystem", "sys/bus/pci")
        if driver:
            self.mkdir("sys/bus/pci/drivers/" + driver)
            self.link(d + "/driver", "sys/bus/pci/drivers/" + driver)
        if msi:
            self.mkdir(d + "/msi_irqs")
        for n, kind in msi:
            self.attr("%s/msi_irqs/%d" % (d, n), kind)
        if physfn:
            self.link(d + "/physfn", "sys/devices/" + physfn)
        return d

    def virtfn(self, pf_path, idx, vf_path):
        self.link("sys/devices/%s/virtfn%d" % (pf_path, idx), "sys/devices/" + vf_path)

    # network interface
    def netdev(self, devdir, name, *, mac, ifindex, speed=None, duplex=None, oper="up",
               carrier=1, mtu=1500, rxq=1, txq=1, rps=None, xps=None, stats=None,
               devlink=True, omit=(), dev_port=0, iftype=1):
        n = devdir + "/net/" + name
        vals = {
            "address": mac, "broadcast": "ff:ff:ff:ff:ff:ff", "addr_len": "6",
            "addr_assign_type": "0", "ifindex": str(ifindex), "iflink": str(ifindex),
            "mtu": str(mtu), "operstate": oper, "type": str(iftype), "flags": "0x1003",
            "tx_queue_len": "1000", "dev_id": "0x0", "dev_port": str(dev_port),
            "link_mode": "0", "name_assign_type": "4",
        }
        if carrier is not None:
            vals["carrier"] = str(carrier)
        if speed is not None:
            vals["speed"] = str(speed)
        if duplex is not None:
            vals["duplex"] = duplex
        for k, v in vals.items():
            if k not in omit:
                self.attr(n + "/" + k, v)
        zero = cpumask([], self.ncpus)
        for q in range(rxq):
            self.attr("%s/queues/rx-%d/rps_cpus" % (n, q), rps[q] if rps else zero)
            self.attr("%s/queues/rx-%d/rps_flow_cnt" % (n, q), "0")
        for q in range(txq):
            self.attr("%s/queues/tx-%d/xps_cpus" % (n, q), xps[q] if xps else zero)
            self.attr("%s/queues/tx-%d/tx_maxrate" % (n, q), "0")
            self.attr("%s/queues/tx-%d/tx_timeout" % (n, q), "0")
        st = {"rx_bytes": 0, "tx_bytes": 0, "rx_packets": 0, "tx_packets": 0,
              "rx_errors": 0, "tx_errors": 0, "rx_dropped": 0, "tx_dropped": 0,
              "rx_missed_errors": 0, "rx_fifo_errors": 0, "rx_crc_errors": 0,
              "rx_over_errors": 0, "tx_fifo_errors": 0, "collisions": 0, "multicast": 0}
        st.update(stats or {})
        for k, v in st.items():
            self.attr("%s/statistics/%s" % (n, k), v)
        if devlink:
            self.link(n + "/device", devdir)
        self.link(n + "/subsystem", "sys/class/net")
        self.link("sys/class/net/" + name, n)
        return n

    def ethtool(self, name, obj):
        o = {"schema": 1}
        o.update(obj)
        self.file("ethtool/%s.json" % name, json.dumps(o, indent=2) + "\n")

    # /proc
    def proc(self, *, prec, irqs, arch, stat_cpu, softirqs, softnet, nr_irqs, btime=1700000000,
             softnet_cols=13, ctxt=0, procs=0):
        """irqs: dicts with irq, counts[ncpus], chip, hwirq, handler, name, aff, eff, node;
        a dict with "level" ("Level"/"Edge") prints the GENERIC_IRQ_SHOW_LEVEL layout of
        arm64 (chip, hwirq, trigger, no flow name) instead of x86's "hwirq-handler".
        arch: (key, counts, desc) tuples, or strings written as they are."""
        n = self.ncpus
        hdr = " " * (prec + 8) + "".join("CPU%-8d" % j for j in range(n)) + "\n"
        lines = [hdr]
        for q in sorted(irqs, key=lambda q: q["irq"]):
            s = "%*d: " % (prec, q["irq"]) + "".join("%10u " % v for v in q["counts"])
            if "level" in q:
                s += " %8s" % q["chip"] + " %*d" % (prec, q["hwirq"]) + " %-8s" % q["level"]
            else:
                s += " %8s" % q["chip"] + " %*d" % (prec, q["hwirq"]) + "-%-8s" % q["handler"]
            s += "  " + q["name"]
            lines.append(s + "\n")
        for a in arch:
            if isinstance(a, str):
                lines.append(a + "\n")
                continue
            key, counts, desc = a
            if counts is None:
                continue
            if len(counts) == 1 and key in ("ERR", "MIS"):
                lines.append("%*s: %10u\n" % (prec, key, counts[0]))
            else:
                lines.append("%*s: " % (prec, key) + "".join("%10u " % v for v in counts)
                             + "  " + desc + "\n")
        self.file("proc/interrupts", "".join(lines))
        for q in irqs:
            base = "proc/irq/%d/" % q["irq"]
            aff = parse_cpulist(q["aff"])
            eff = parse_cpulist(q["eff"])
            self.attr(base + "smp_affinity", cpumask(aff, n))
            self.attr(base + "smp_affinity_list", q["aff"])
            self.attr(base + "effective_affinity", cpumask(eff, n))
            self.attr(base + "effective_affinity_list", q["eff"])
            self.attr(base + "node", q.get("node", 0))
            self.attr(base + "spurious", "count 0\nunhandled 0\nlast_unhandled 0 ms")
            self.mkdir(base + q["name"].split(",")[0].strip())
        self.attr("proc/irq/default_smp_affinity", cpumask(range(n), n))
        # /proc/stat
        tot = [sum(col) for col in zip(*stat_cpu)]
        st = ["cpu  " + " ".join(str(v) for v in tot)]
        for j, row in enumerate(stat_cpu):
            st.append("cpu%d " % j + " ".join(str(v) for v in row))
        per = [0] * nr_irqs
        for q in irqs:
            per[q["irq"]] = sum(q["counts"])
        st.append("intr %d " % sum(per) + " ".join(str(v) for v in per))
        st.append("ctxt %d" % ctxt)
        st.append("btime %d" % btime)
        st.append("processes %d" % procs)
        st.append("procs_running 2")
        st.append("procs_blocked 0")
        sums = [sum(v) for _, v in softirqs]
        st.append("softirq %d " % sum(sums) + " ".join(str(v) for v in sums))
        self.file("proc/stat", "\n".join(st) + "\n")
        # /proc/softirqs
        sl = ["                    " + "".join("CPU%-8d" % j for j in range(n))]
        for name, vals in softirqs:
            sl.append("%12s:" % name + "".join(" %10u" % v for v in vals))
        self.file("proc/softirqs", "\n".join(sl) + "\n")
        # /proc/net/softnet_stat
        rows = []
        for j, (processed, dropped, squeeze, rps) in enumerate(softnet):
            cols = [processed, dropped, squeeze, 0, 0, 0, 0, 0, 0, rps, 0]
            if softnet_cols == 13:
                cols += [0, j]
            rows.append(" ".join("%08x" % (v & 0xFFFFFFFF) for v in cols))
        self.file("proc/net/softnet_stat", "\n".join(rows) + "\n")

    def write(self):
        root = os.path.join(HERE, self.name)
        if os.path.exists(root):
            shutil.rmtree(root)
        os.makedirs(root)
        for d in sorted(self.dirs):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        for rel in sorted(self.files):
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(self.files[rel])
        for rel in sorted(self.links):
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            os.symlink(self.links[rel], p)
        readme = ["Source: " + self.source, "", self.summary, "",
                  "## Reconstructed values (not in the source dump) and what they rest on", ""]
        readme += ["- " + n for n in self.notes]
        readme.append("")
        readme.append("Generated by ../gen.py; edit the generator, not the tree.")
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write("\n".join(readme) + "\n")
        check_tree(root)


def check_tree(root):
    """Every symlink is relative and resolves inside root."""
    rroot = os.path.realpath(root)
    for dp, dns, fns in os.walk(root):
        for n in dns + fns:
            p = os.path.join(dp, n)
            if os.path.islink(p):
                t = os.readlink(p)
                if os.path.isabs(t):
                    raise SystemExit("absolute symlink %s -> %s" % (p, t))
                r = os.path.realpath(p)
                if not (r == rroot or r.startswith(rroot + os.sep)):
                    raise SystemExit("symlink leaves the root: %s -> %s" % (p, t))
                if not os.path.exists(p):
                    raise SystemExit("dangling symlink %s -> %s" % (p, t))


# ---------------------------------------------------------------------------
# Synthetic but deterministic counters for /proc

def spread(total, weights):
    s = sum(weights)
    out = [total * w // s for w in weights]
    out[0] += total - sum(out)
    return out


def x86_arch_lines(n, loc_base, scale=1, with_dfr=True):
    """The arch_show_interrupts lines of x86 (names/descriptions as the kernel prints)."""
    def row(base, step=0):
        return [base * scale + step * j for j in range(n)]
    lines = [
        ("NMI", row(40, 3), "Non-maskable interrupts"),
        ("LOC", [loc_base + 7919 * j for j in range(n)], "Local timer interrupts"),
        ("SPU", [0] * n, "Spurious interrupts"),
        ("PMI", row(40, 3), "Performance monitoring interrupts"),
        ("IWI", row(12, 1), "IRQ work interrupts"),
        ("RTR", [0] * n, "APIC ICR read retries"),
        ("RES", row(5200, 311), "Rescheduling interrupts"),
        ("CAL", row(2100, 97), "Function call interrupts"),
        ("TLB", row(900, 41), "TLB shootdowns"),
        ("TRM", [0] * n, "Thermal event interrupts"),
        ("THR", [0] * n, "Threshold APIC interrupts"),
    ]
    if with_dfr:
        lines.append(("DFR", [0] * n, "Deferred Error APIC interrupts"))
    lines += [
        ("MCE", [0] * n, "Machine check exceptions"),
        ("MCP", [12] * n, "Machine check polls"),
        ("ERR", [0], ""),
        ("MIS", [0], ""),
        ("PIN", [0] * n, "Posted-interrupt notification event"),
        ("NPI", [0] * n, "Nested posted-interrupt event"),
        ("PIW", [0] * n, "Posted-interrupt wakeup event"),
    ]
    return lines


def legacy_irqs(n, ir, extra=()):
    """Timer, i8042, rtc, acpi and friends: IO-APIC lines every x86 host has."""
    chip = "IR-IO-APIC" if ir else "IO-APIC"
    base = [(0, 2, "edge", "timer", [44] + [0] * (n - 1)),
            (1, 1, "edge", "i8042", [0] * (n - 1) + [9]),
            (8, 8, "edge", "rtc0", [1] + [0] * (n - 1)),
            (9, 9, "fasteoi", "acpi", [0] * n)]
    base += list(extra)
    return [dict(irq=i, hwirq=h, handler=hd, name=nm, counts=c, chip=chip, aff=cpulist(range(n)),
                 eff="0") for i, h, hd, nm, c in base]


def msi_irq(irq, bus, dev, fn, index, name, counts, *, ir, aff, eff, msix=True, node=0):
    hw = (bus << 8 | dev << 3 | fn) << 11 | index
    return dict(irq=irq, hwirq=hw, handler="edge", name=name, counts=counts,
                chip=("IR-PCI-MSI" if ir else "PCI-MSI"), aff=aff, eff=eff, node=node)


def stat_rows(n, busy):
    """busy: {cpu: (user, system, irq, softirq)} in USER_HZ; others idle-ish."""
    rows = []
    for j in range(n):
        u, s, i, si = busy.get(j, (41000 + 113 * j, 15000 + 71 * j, 0, 800 + 13 * j))
        idle = 9000000 - u - s - i - si
        rows.append([u, 120 + j, s, idle, 2100 + 17 * j, i, si, 0, 0, 0])
    return rows


def softirq_rows(n, net_rx, net_tx, timer=300000):
    names = ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED",
             "HRTIMER", "RCU"]
    vals = {
        "HI": [3 + j % 2 for j in range(n)], "TIMER": [timer + 977 * j for j in range(n)],
        "NET_TX": net_tx, "NET_RX": net_rx, "BLOCK": [17000 + 311 * j for j in range(n)],
        "IRQ_POLL": [0] * n, "TASKLET": [200 + 7 * j for j in range(n)],
        "SCHED": [250000 + 1031 * j for j in range(n)], "HRTIMER": [40 + j for j in range(n)],
        "RCU": [150000 + 733 * j for j in range(n)],
    }
    return [(k, vals[k]) for k in names]


# ---------------------------------------------------------------------------
# The trees

TREES = {}


def tree(fn):
    TREES[fn.__name__.replace("_", "-").removeprefix("t-")] = fn
    return fn


IGB_MODES = ["10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full", "1000baseT/Full"]
SRC_82576 = "lspci-vvvxxxx-82576-ET-dual-pciutils-tests-cap-pcie-2.txt"
SRC_EB1035 = "lspci-vvnn-empty-slots-downgraded-x0-asus-eb1035-linuxhw-LsPCI.txt"
URL_82576 = ("https://github.com/pciutils/pciutils/blob/0f5b941aa5cf8b1b126ff3e4176b1c32b2158289/"
             "tests/cap-pcie-2")
URL_EB1035 = ("https://github.com/linuxhw/LsPCI/blob/b6f240cadf450cc81bf1ddedb356a92327410a2f/"
              "All%20In%20One/ASUSTek%20Computer/EB/EB1035/761B03C3DC6E/DEBIAN-12/6.1.0-21-AMD64/"
              "X86_64/05F08EE91E")


def eb1035_rootport_1c0(sta_speed, sta_width, dlactive):
    """7 Series PCH root port 1 [8086:1e10] rev c4 as decoded in the EB1035 probe
    (caps at 40 PCIe / 80 MSI / 90 SSVID / a0 PM; LnkCap 5GT/s x1; MPS 128, MRRS 128)."""
    return build_config(
        0x8086, 0x1E10, 0x060400, 0xC4, multi=True, bridge=(0, 1, 1), command=0x0007,
        irq_line=16, irq_pin=1,
        caps=[(0x40, cap_pcie(4, 128, 128, 128, 2, 1, sta_speed, sta_width, port=1, slot=True,
                              dlactive=dlactive, dllla=True, linkcap2=None, target=sta_speed,
                              l0s=4, l1=4)),
              (0x80, cap_msi(is64=False, enabled=True, addr=0xFEE01004, data=0x0021)),
              (0x90, cap_ssvid(0x1043, 0x844D)),
              (0xA0, cap_pm(pmc=0xC802, pmcsr=0x0000))],
        size=256)


def minipc_host(t, rp_sta_speed):
    """The mini PC of trees 1 and 2: EB1035-style Ivy Bridge Celeron, 2 CPUs, 7-series PCH,
    the mini-PCIe slot on root port 00:1c.0 (5 GT/s x1)."""
    t.ncpus = 2
    cfg = eb1035_rootport_1c0(rp_sta_speed, 1, True)
    t.pci("pci0000:00/0000:00:1c.0", vendor=0x8086, device=0x1E10, cls=0x060400, rev=0xC4,
          sv=0x1043, sd=0x844D, irq=24, config=cfg, driver="pcieport",
          link=dict(cur_speed=SPEED_NEW[rp_sta_speed], cur_width=1, max_speed="5.0 GT/s PCIe",
                    max_width=1),
          msi=[(24, "msi")])
    t.note("Root port 00:1c.0 is not in the NIC dump. It is the EB1035 probe's 7 Series PCH root "
           "port 1 [8086:1e10] rev c4, subsystem ASUS 1043:844d, copied from its decoded `lspci -vvnn` "
           "block (" + URL_EB1035 + "): LnkCap 5 GT/s x1, Root Port (Slot+), DevCap/DevCtl MPS 128, "
           "MRRS 128, caps at 40 (PCIe) 80 (MSI) 90 (SSVID) a0 (PM). Its 256-byte `config` is "
           "rebuilt from that decoded text (not a hex dump); LnkSta is set to %s x1 DLActive+, and the "
           "secondary bus to 01. sysfs max_link_* 5.0 GT/s PCIe / 1 follow from LnkCap; the choice of "
           "this root port as the mini-PCIe slot is the scenario, not a capture."
           % SPEED_NEW[rp_sta_speed].replace(" PCIe", ""))


def minipc_proc(t, nics, ir=False):
    """/proc for the 2-CPU mini PC after a bidirectional iperf over both ports."""
    n = t.ncpus
    irqs = legacy_irqs(n, ir, extra=[(16, 16, "fasteoi", "ehci_hcd:usb1", [29, 0]),
                                     (23, 23, "fasteoi", "ehci_hcd:usb2", [31, 0])])
    irqs.append(msi_irq(24, 0, 0x1C, 0, 0, "PCIe PME", [0, 0], ir=ir, aff="0-1", eff="0"))
    irqs.append(msi_irq(25, 0, 0x1F, 2, 0, "ahci[0000:00:1f.2]", [14822, 0], ir=ir, aff="0-1",
                        eff="0", msix=False))
    for nic in nics:
        for q in nic:
            irqs.append(q)
    t.proc(prec=3, irqs=irqs, arch=x86_arch_lines(n, 5400000, with_dfr=False),
           stat_cpu=stat_rows(n, {0: (52000, 21000, 0, 96000), 1: (50500, 20400, 0, 94000)}),
           softirqs=softirq_rows(n, [4180733, 4121977], [35121, 34807]),
           softnet=[(4180101, 0, 1822, 0), (4121312, 0, 1790, 0)], nr_irqs=440,
           ctxt=81234567, procs=10234)


def igb_vectors(t, name, bus, dev, fn, first_irq, queues, counts_per_q, ir):
    out = [msi_irq(first_irq, bus, dev, fn, 0, name, [3, 1], ir=ir, aff="0-1", eff="0")]
    for q in range(queues):
        cpu = q % t.ncpus
        c = [0] * t.ncpus
        c[cpu] = counts_per_q
        out.append(msi_irq(first_irq + 1 + q, bus, dev, fn, 1 + q, "%s-TxRx-%d" % (name, q), c,
                           ir=ir, aff=str(cpu), eff=str(cpu)))
    return out


@tree
def t_82576_minipcie_x1():
    t = Tree("82576-minipcie-x1", URL_82576,
             "Intel 82576 dual-port Gigabit ET [8086:10c9] subsys 8086:a03c (driver igb, netdevs "
             "enp1s0f0/enp1s0f1) in a mini-PCIe slot through a mini-PCIe -> PCIe x1 adapter: the "
             "link trained at 2.5 GT/s x1 (device LnkCap 2.5 GT/s x4, slot LnkCap 5 GT/s x1). This "
             "is the seed scenario (docs/field-reports.md report 001, docs/pcie-model.md 4.1): ~1 Gb/s per port one "
             "way, just under 1400 Mb/s total bidirectional.")
    minipc_host(t, 1)
    raw = load_lspci_hex(SRC_82576)["01:00.0"]
    assert len(raw) == 4096
    funcs = []
    for fn in (0, 1):
        c = bytearray(raw)
        set_lnksta(c, 1, 1)
        p = find_ext(c, 0x0010)
        wr16(c, p + 8, 0)          # IOVCtl: VF Enable-, VF MSE-
        wr16(c, p + 0x10, 0)       # NumVFs 0
        if fn == 1:
            c[0x3D] = 0x02         # interrupt pin B
            c[0x3C] = 0x11
            wr32(c, 0x10, 0xE0820000)
            wr32(c, 0x14, 0xE0400000)
            wr32(c, 0x18, 0x00001001)
            wr32(c, 0x1C, 0xE0844000)
            wr32(c, 0x30, 0xC7C00000)
            pa = find_ext(c, 0x000E)
            c[pa + 5] = 0          # ARI next function: 0 (last)
        funcs.append(c)
    t.note("01:00.0 config is the fixture's real 4096 bytes with three patches: LnkSta set from "
           "2.5 GT/s x4 to 2.5 GT/s x1 (the adapter's one lane; status word 0x1041 -> 0x1011), and "
           "SR-IOV IOVCtl VF Enable/MSE cleared and NumVFs 1 -> 0 (the fixture host had one VF "
           "enabled; the seed host has none, so sriov_numvfs is 0 and no virtfn links exist).")
    t.note("01:00.1 is not in the dump: its config is a copy of 01:00.0's (same patches) with "
           "interrupt pin B / line 17, its own BAR addresses and ROM base, and ARI Next Function 0. "
           "Its DSN equals function 0's (one device). MAC 00:1b:21:2b:46:e1 follows function 0's.")
    t.note("MAC 00:1b:21:2b:46:e0 of enp1s0f0 is derived from the device serial number "
           "e0-46-2b-ff-ff-21-1b-00 in the dump (EUI-64 of the MAC, as Intel builds it).")
    t.note("sysfs link files: current_link_speed 2.5 GT/s PCIe, current_link_width 1, "
           "max_link_speed 2.5 GT/s PCIe, max_link_width 4, derived from the (patched) LnkSta and "
           "the real LnkCap. Kernel string format is the >= 5.2 one (\"2.5 GT/s PCIe\").")
    t.note("Host (not in any dump): 2 CPUs (Ivy Bridge Celeron class, no VT-d, so chips print "
           "PCI-MSI/IO-APIC without IR-), numa_node -1, irq 16/17 (INTx lines, as the fixture's "
           "'routed to IRQ 16'), MSI-X vectors 26-28 (enp1s0f0) and 29-31 (enp1s0f1): igb with 2 "
           "CPUs uses 2 queue pairs, one 'other' vector named after the netdev plus NAME-TxRx-0..1.")
    t.note("ethtool/*.json: driver igb, version 6.1.0-18-amd64 (in-tree drivers report the kernel "
           "release), firmware 1.5-1, speed 1000 full, autoneg on, TP, the igb copper modes "
           "(10/100 half+full, 1000baseT/Full), channels max_combined 8 / combined 2 / other 1: "
           "reconstructed from the igb driver's behaviour, not captured.")
    t.note("proc/interrupts, proc/irq/*, proc/stat, proc/softirqs, proc/net/softnet_stat: "
           "synthetic counters laid out as the kernel prints them (format as in the node_exporter "
           "and procfs /proc/interrupts fixtures; 13-column softnet_stat of kernels >= 5.10), "
           "describing a bidirectional test over both ports with TxRx-0 on CPU0 and TxRx-1 on "
           "CPU1; no drops; a few time_squeezes.")
    nics = []
    irq = 26
    for fn, c in enumerate(funcs):
        name = "enp1s0f%d" % fn
        path = "pci0000:00/0000:00:1c.0/0000:01:00.%d" % fn
        vecs = [irq, irq + 1, irq + 2]
        d = t.pci(path, vendor=0x8086, device=0x10C9, cls=0x020000, rev=0x01, sv=0x8086,
                  sd=0xA03C, irq=16 + fn, config=c, driver="igb",
                  link=dict(cur_speed="2.5 GT/s PCIe", cur_width=1, max_speed="2.5 GT/s PCIe",
                            max_width=4),
                  msi=[(v, "msix") for v in vecs],
                  sriov=dict(total=8, num=0, offset=384, stride=2, vfdev=0x10CA))
        mac = "00:1b:21:2b:46:e%d" % fn
        t.netdev(d, name, mac=mac, ifindex=2 + fn, speed=1000, duplex="full", rxq=2, txq=2,
                 dev_port=0, stats={"rx_bytes": 50211934211 + fn, "tx_bytes": 49877123456 + fn,
                                    "rx_packets": 33498321 + fn, "tx_packets": 33120987 + fn})
        t.ethtool(name, {"driver": "igb", "version": "6.1.0-18-amd64", "firmware_version": "1.5-1",
                         "bus_info": "0000:01:00.%d" % fn,
                         "link": {"speed_mbps": 1000, "duplex": "full", "autoneg": True,
                                  "port": "TP", "supported": IGB_MODES, "advertised": IGB_MODES,
                                  "source": "GLINKSETTINGS"},
                         "channels": {"max_rx": 0, "max_tx": 0, "max_other": 1, "max_combined": 8,
                                      "rx": 0, "tx": 0, "other": 1, "combined": 2},
                         "perm_addr": mac})
        nics.append(igb_vectors(t, name, 1, 0, fn, irq, 2, 16700000 + 1000 * fn, False))
        irq += 3
    minipc_proc(t, nics)
    return t


@tree
def t_i350_minipcie_x1():
    t = Tree("i350-minipcie-x1", SRC_I350,
             "Intel I350 dual-port [8086:1521] (driver igb, enp1s0f0/enp1s0f1) on the same mini-PCIe -> "
             "x1 adapter and root port as 82576-minipcie-x1, trained at 5.0 GT/s x1 (device LnkCap "
             "5 GT/s x4). The seed's I340/I350 comparison: 1850-2000 Mb/s bidirectional.")
    return i350_minipc(t)


@tree
def t_i350_dpdk_vfio():
    t = Tree("i350-dpdk-vfio", "i350-minipcie-x1 (this directory), itself from " + SRC_I350,
             "The i350-minipcie-x1 machine with port 1 handed to DPDK: 01:00.0 stays on igb "
             "(enp1s0f0), 01:00.1 is bound to vfio-pci and has no netdev (no net/ directory, no "
             "ethtool answers), both on the 5.0 GT/s x1 link of the mini-PCIe adapter. The case "
             "nicdiag cannot see through /sys/class/net.")
    t.note("Everything not named below is i350-minipcie-x1 unchanged (same generator code).")
    t.note("01:00.1 rebound from igb to vfio-pci the way `dpdk-devbind.py --bind=vfio-pci` does "
           "it (unbind from igb, driver_override, bind): its `driver` link names "
           "bus/pci/drivers/vfio-pci, its net/enp1s0f1 directory, ethtool/enp1s0f1.json and the "
           "enp1s0f1 IRQ vectors are gone. The host has no VT-d, so vfio-pci runs in no-IOMMU mode "
           "(enable_unsafe_noiommu_mode=1, as DPDK's Linux guide describes for such hosts), which "
           "puts the function in a group of its own: iommu_group -> kernel/iommu_groups/0.")
    t.note("msi_irqs/ of 01:00.1 holds the one MSI-X vector (irq 29) a DPDK application that "
           "asks for link-status interrupts gets through VFIO; /proc/interrupts names it "
           "vfio-msix[0](0000:01:00.1) as vfio-pci does. The receive path polls (no queue "
           "vectors). The /proc counters are otherwise those of i350-minipcie-x1 (synthetic).")
    return i350_minipc(t, dpdk_fn=1)


SRC_I350 = ("https://github.com/prometheus/node_exporter/blob/a7dcc3a01545180d4f2087db70994cbc3abfed13/"
            "collector/fixtures/sys.ttar (I350 sysfs attributes) + " + URL_82576 +
            " (igb-family config layout)")


def i350_minipc(t, dpdk_fn=None):
    """The I350 on the mini-PCIe x1 adapter; function dpdk_fn, if any, bound to vfio-pci."""
    minipc_host(t, 2)
    raw = load_lspci_hex(SRC_82576)["01:00.0"]
    funcs = []
    for fn in (0, 1):
        c = bytearray(raw)
        wr16(c, 2, 0x1521)
        wr16(c, 0x2E, 0x0002)
        p = find_cap(c, 0x10)
        lc = rd32(c, p + 0x0C)
        wr32(c, p + 0x0C, (lc & ~0x3FF) | 2 | 4 << 4)        # LnkCap 5 GT/s x4
        set_lnksta(c, 2, 1)
        wr16(c, p + 0x30, 2)                                 # LnkCtl2 target 5 GT/s
        ps = find_ext(c, 0x0010)
        wr16(c, ps + 8, 0)
        wr16(c, ps + 0x10, 0)
        wr16(c, ps + 0x14, 0x80)                             # VF offset 128
        wr16(c, ps + 0x16, 4)                                # VF stride 4
        wr16(c, ps + 0x1A, 0x1520)                           # VF device id
        if fn == 1:
            c[0x3D], c[0x3C] = 0x02, 0x11
            wr32(c, 0x10, 0xE0820000)
            wr32(c, 0x18, 0x00001001)
            wr32(c, 0x1C, 0xE0844000)
            pa = find_ext(c, 0x000E)
            c[pa + 5] = 0
        funcs.append(c)
    t.note("No I350 config-space dump exists in the fixtures. Both `config` files (4096 bytes) are "
           "the 82576 dump (same igb family, same capability layout 40 PM / 50 MSI / 70 MSI-X / a0 "
           "PCIe / 100 AER / 140 DSN / 150 ARI / 160 SR-IOV) with: device id 0x1521, subsystem "
           "8086:0002, LnkCap 5 GT/s x4, LnkSta 5 GT/s x1, LnkCtl2 target 5 GT/s, SR-IOV disabled "
           "with NumVFs 0, VF offset 128, stride 4, VF device 0x1520 (I350 values, as in the ghw "
           "Xeon snapshot's VF numbering). Function 1: pin B, other BARs, ARI next function 0.")
    t.note("Attribute values vendor/device/class/revision 0x01/sriov_totalvfs 7 are the real I350 "
           "values from the node_exporter fixture (45:00.0). Its subsystem 8086:00a3 is a 4-port "
           "OCP card; this tree uses 8086:0002 (I350-T2, pci.ids) to match a dual-port card.")
    t.note("Root port LnkSta and sysfs current_link_speed are 5.0 GT/s PCIe x1: the seed's "
           "1850-2000 Mb/s I340/I350 result implies a Gen2 x1 link (docs/pcie-model.md 4.1 step 6).")
    t.note("Host, IRQs, MSI-X vector names, ethtool JSON (firmware '1.63, 0x800009fa', version "
           "6.1.0-18-amd64) and /proc counters are reconstructed exactly as in 82576-minipcie-x1.")
    nics = []
    irq = 26
    for fn, c in enumerate(funcs):
        name = "enp1s0f%d" % fn
        path = "pci0000:00/0000:00:1c.0/0000:01:00.%d" % fn
        if fn == dpdk_fn:
            d = t.pci(path, vendor=0x8086, device=0x1521, cls=0x020000, rev=0x01, sv=0x8086,
                      sd=0x0002, irq=16 + fn, config=c, driver="vfio-pci",
                      link=dict(cur_speed="5.0 GT/s PCIe", cur_width=1, max_speed="5.0 GT/s PCIe",
                                max_width=4),
                      msi=[(irq, "msix")],
                      sriov=dict(total=7, num=0, offset=128, stride=4, vfdev=0x1520))
            t.mkdir("sys/kernel/iommu_groups/0/devices")
            t.link(d + "/iommu_group", "sys/kernel/iommu_groups/0")
            t.link("sys/kernel/iommu_groups/0/devices/0000:01:00.%d" % fn, d)
            bdf = "0000:01:00.%d" % fn
            nics.append([msi_irq(irq, 1, 0, fn, 0, "vfio-msix[0](%s)" % bdf, [2, 0], ir=False,
                                 aff="0-1", eff="0")])
            irq += 3
            continue
        d = t.pci(path, vendor=0x8086, device=0x1521,
                  cls=0x020000, rev=0x01, sv=0x8086, sd=0x0002, irq=16 + fn, config=c, driver="igb",
                  link=dict(cur_speed="5.0 GT/s PCIe", cur_width=1, max_speed="5.0 GT/s PCIe",
                            max_width=4),
                  msi=[(v, "msix") for v in (irq, irq + 1, irq + 2)],
                  sriov=dict(total=7, num=0, offset=128, stride=4, vfdev=0x1520))
        mac = "a0:36:9f:1c:22:%02x" % (0x40 + fn)
        t.netdev(d, name, mac=mac, ifindex=2 + fn, speed=1000, duplex="full", rxq=2, txq=2)
        t.ethtool(name, {"driver": "igb", "version": "6.1.0-18-amd64",
                         "firmware_version": "1.63, 0x800009fa", "bus_info": "0000:01:00.%d" % fn,
                         "link": {"speed_mbps": 1000, "duplex": "full", "autoneg": True, "port": "TP",
                                  "supported": IGB_MODES, "advertised": IGB_MODES,
                                  "source": "GLINKSETTINGS"},
                         "channels": {"max_rx": 0, "max_tx": 0, "max_other": 1, "max_combined": 8,
                                      "rx": 0, "tx": 0, "other": 1, "combined": 2},
                         "perm_addr": mac})
        nics.append(igb_vectors(t, name, 1, 0, fn, irq, 2, 23800000 + 1000 * fn, False))
        irq += 3
    if dpdk_fn is None:
        t.note("MACs a0:36:9f:1c:22:40/41 (an Intel OUI) are invented.")
    else:
        t.note("MAC a0:36:9f:1c:22:40 (an Intel OUI) is invented.")
    minipc_proc(t, nics)
    return t


SEED000 = "https://bokehui.net/article/100113552 (review of the MikroTik CCR2004-1G-2XS-PCIe; report 000 in docs/field-reports.md), host view copied to src/seed-000-ccr2004-host.txt: lspci, dmesg, ethtool, ethtool -i"


@tree
def t_ccr2004_host():
    t = Tree("ccr2004-host", SEED000,
             "MikroTik CCR2004-1G-2XS-PCIe seen from its host (Core i9-10850K, Fedora 36, kernel "
             "5.17.9-300.fc36.x86_64): four functions 01:00.0-3 that call themselves Qualcomm Atheros "
             "AR8151 v2.0 [1969:1083], driver atl1c, netdevs enp1s0f0..3 at 25000 Mb/s full duplex "
             "while listing only 10/100baseT modes, on a PCIe 3.0 link 8 GT/s x8 in the CPU's x16 slot.")
    return ccr2004_machine(t, 3, 8)


@tree
def t_ccr2004_gen1_x1():
    t = Tree("ccr2004-gen1-x1", SEED000 + "; the 2.5 GT/s x1 training is constructed for the test",
             "The ccr2004-host machine with the card's link (root port 00:01.0 -> 01:00.x) trained "
             "at 2.5 GT/s x1 (LnkSta of both ends) while both LnkCaps still say 8 GT/s (x16 port, "
             "x8 card): the CCR2004, whose four 25G host interfaces are forwarded by its own CPU, "
             "on a link (2 Gb/s of data) far below what it forwards. A real downgrade.")
    t.note("Constructed for the test, not captured: everything is ccr2004-host (same generator "
           "code, ccr2004_machine) except the trained link. LnkSta of root port 00:01.0 and of "
           "01:00.0-3 is 2.5 GT/s x1 instead of 8 GT/s x8; LnkCap stays 8 GT/s x16 (port) and "
           "8 GT/s x8 (card), LnkCtl2 target 8 GT/s; sysfs current_link_speed/width 2.5 GT/s "
           "PCIe / 1 on all five functions, max_link_* unchanged (8.0 GT/s PCIe, 16 / 8). The "
           "scenario (a bad riser or a slot that trains at Gen1 x1) is invented.")
    return ccr2004_machine(t, 1, 1)


def ccr2004_machine(t, sta_speed, sta_width):
    """The ccr2004-host machine; the card's link trained at LnkSta sta_speed (code) x sta_width."""
    t.ncpus = 20
    cur_speed = SPEED_NEW[sta_speed]
    rp = build_config(0x8086, 0x1901, 0x060400, 0x05, bridge=(0, 1, 1), command=0x0407,
                      irq_line=0xFF, irq_pin=1,
                      caps=[(0x80, cap_pm(pmc=0xC803, pmcsr=0x0008)),
                            (0x88, cap_ssvid(0x8086, 0x7270)),
                            (0x90, cap_msi(is64=False, enabled=True, addr=0xFEE00258, data=0)),
                            (0xA0, cap_pcie(4, 256, 256, 128, 3, 16, sta_speed, sta_width,
                                            port=2, slot=True,
                                            dlactive=True, dllla=True, bwnot=True,
                                            linkcap2=0x0E, target=3))],
                      size=256)
    t.pci("pci0000:00/0000:00:01.0", vendor=0x8086, device=0x1901, cls=0x060400, rev=0x05,
          sv=0x8086, sd=0x7270, irq=122, config=rp, driver="pcieport",
          link=dict(cur_speed=cur_speed, cur_width=sta_width, max_speed="8.0 GT/s PCIe",
                    max_width=16),
          msi=[(122, "msi")])
    macs = ["48:a9:8a:5e:10:%02x" % (0x3c + i) for i in range(4)]
    irqs = []
    for fn in range(4):
        name = "enp1s0f%d" % fn
        c = build_config(0x1969, 0x1083, 0x020000, 0xC0, sv=0x1969, sd=0x1083, multi=True,
                         command=0x0406, bars=(0xA0000000 + fn * 0x40000 | 0x4, 0), irq_line=0xFF,
                         irq_pin=1 + fn,
                         caps=[(0x40, cap_pm(pmc=0xC823, pmcsr=0x0008)),
                               (0x48, cap_msi(is64=True, enabled=True, addr=0xFEE00000 | fn << 12,
                                              data=0x4021 + fn)),
                               (0x58, cap_pcie(0, 256, 256, 512, 3, 8, sta_speed, sta_width,
                                               linkcap2=0x0E,
                                               target=3, aspm_sup=0x0))],
                         size=256)
        d = t.pci("pci0000:00/0000:00:01.0/0000:01:00.%d" % fn, vendor=0x1969, device=0x1083,
                  cls=0x020000, rev=0xC0, sv=0x1969, sd=0x1083, irq=127 + fn, config=c,
                  driver="atl1c",
                  link=dict(cur_speed=cur_speed, cur_width=sta_width, max_speed="8.0 GT/s PCIe",
                            max_width=8),
                  msi=[(127 + fn, "msi")])
        t.netdev(d, name, mac=macs[fn], ifindex=2 + fn, speed=25000, duplex="full", rxq=4, txq=4,
                 stats={"rx_bytes": [96123456789, 1023456, 998877, 1002345][fn],
                        "tx_bytes": [35811223344, 1200456, 1187654, 1190001][fn],
                        "rx_packets": [63543210, 8021, 7990, 8003][fn],
                        "tx_packets": [23987654, 9120, 9033, 9051][fn]})
        t.ethtool(name, {"driver": "atl1c", "version": "5.17.9-300.fc36.x86_64",
                         "bus_info": "0000:01:00.%d" % fn,
                         "link": {"speed_mbps": 25000, "duplex": "full", "autoneg": True,
                                  "port": "TP",
                                  "supported": ["10baseT/Half", "10baseT/Full", "100baseT/Half",
                                                "100baseT/Full"],
                                  "source": "GLINKSETTINGS"},
                         "perm_addr": macs[fn],
                         "errors": {"channels": "operation not supported"}})
        # one MSI per function; all of enp1s0f0's traffic lands on CPU 7
        cnt = [0] * 20
        if fn == 0:
            cnt[7] = 6123457
        else:
            cnt[(8 + fn)] = 2100 + fn
        eff = "7" if fn == 0 else str(8 + fn)
        irqs.append(msi_irq(127 + fn, 1, 0, fn, 0, name, cnt, ir=True, aff="0-19", eff=eff))
    irqs = legacy_irqs(20, True, extra=[(16, 16, "fasteoi", "i801_smbus", [0] * 20)]) + irqs
    irqs.append(msi_irq(122, 0, 1, 0, 0, "PCIe PME", [0] * 20, ir=True, aff="0-19", eff="4"))
    irqs.append(msi_irq(123, 0, 0x14, 0, 0, "xhci_hcd", [0] * 3 + [48211] + [0] * 16, ir=True,
                        aff="0-19", eff="3"))
    nvme = [0] * 20
    for j in range(20):
        nvme[j] = 1200 + 37 * j
    irqs.append(msi_irq(124, 2, 0, 0, 0, "nvme0q0", [61] + [0] * 19, ir=True, aff="0-19", eff="0"))
    rx = [21000 + 400 * j for j in range(20)]
    rx[7] = 5121337
    tx = [900 + 13 * j for j in range(20)]
    busy = {7: (30100, 41200, 9800, 611000)}
    soft = [(20100 + 211 * j, 0, 0, 0) for j in range(20)]
    soft[7] = (61877123, 1723, 48211, 0)
    t.proc(prec=4, irqs=irqs, arch=x86_arch_lines(20, 3100000), stat_cpu=stat_rows(20, busy),
           softirqs=softirq_rows(20, rx, tx), softnet=soft, nr_irqs=2216, ctxt=412345678,
           procs=51234)
    sta = "%s x%d" % ({1: "2.5 GT/s", 2: "5 GT/s", 3: "8 GT/s"}[sta_speed], sta_width)
    t.note("Root port 00:01.0 (not in the seed, which says only 'PCIe 3.0 x16 slot, CPU lanes'): "
           "Comet Lake CPU PEG port [8086:1901] rev 05, subsystem 8086:7270 (an SSVID capability), "
           "LnkCap 8 GT/s x16, LnkSta %s, MPS 256 / MRRS 128; 256-byte config built by "
           "gen.py; sysfs max 8.0 GT/s PCIe / 16, current %s / %d."
           % (sta, cur_speed, sta_width))
    t.note("Functions 01:00.0-3: IDs 1969:1083 and driver/netdev names are from the seed (lspci "
           "name, dmesg). Revision 0xc0 (the AR8151 v2.0 revision) and subsystem 1969:1083 are my "
           "choice: the seed shows no Subsystem line, and atl1c recognises the card by an MMIO "
           "magic register (REG_MT_MAGIC), not by subsystem ids.")
    if (sta_speed, sta_width) == (3, 8):
        t.note("Link: LnkCap and LnkSta 8 GT/s x8 on every function (the review: PCIe 3.0 x8, so "
               "the card's LnkCap is 8 GT/s x8; the functions of one device share the link); DevCap/DevCtl MPS 256, MRRS "
               "512; sysfs current/max 8.0 GT/s PCIe / 8. The 256-byte configs (PM at 40, MSI at 48, "
               "PCIe at 58 like a real AR8151) are built by gen.py, not dumped.")
    else:
        t.note("Link: LnkCap 8 GT/s x8 on every function (the review: PCIe 3.0 x8; the functions "
               "of one device share the link), LnkSta %s (constructed, see above); DevCap/DevCtl "
               "MPS 256, MRRS 512; sysfs max 8.0 GT/s PCIe / 8, current %s / %d. The 256-byte "
               "configs (PM at 40, MSI at 48, PCIe at 58 like a real AR8151) are built by gen.py, "
               "not dumped." % (sta, cur_speed, sta_width))
    t.note("Interrupts: atl1c requests one MSI vector per function (msi_irqs/N = msi; IRQs 127-130, "
           "hwirq = BDF<<11), named after the netdev; it has 4 RX/TX queues on this card (MikroTik's "
           "2021 multi-queue patch) but one vector, so everything lands on one CPU (7 here). "
           "Counters, CPU count (20 = i9-10850K) and the hot CPU are synthetic.")
    t.note("ethtool/*.json: speed 25000, duplex full, autoneg on, port TP, supported exactly "
           "10baseT/Half 10baseT/Full 100baseT/Half 100baseT/Full, advertised none ('Not reported', "
           "so the field is absent), driver atl1c, version 5.17.9-300.fc36.x86_64, empty firmware "
           "(absent), bus_info per function: all from the seed's ethtool output for enp1s0f0, "
           "assumed identical for f1-f3. Channels: atl1c has no get_channels (error entry). "
           "MACs 48:a9:8a:5e:10:3c..3f use a MikroTik OUI and are invented.")
    return t


SRC_ICH10 = "lspci-xxxx-2xRTL8111-x58-ich10-pciutils-tests-tree-asus-p6t6.txt"


@tree
def t_rtl8111_ich10_x58():
    t = Tree("rtl8111-ich10-x58",
             "https://github.com/pciutils/pciutils/blob/0f5b941aa5cf8b1b126ff3e4176b1c32b2158289/tests/tree-asus-p6t6",
             "ASUS P6T6 (X58 + ICH10): two onboard RTL8111/8168 rev 02 [10ec:8168] subsys 1043:8367 "
             "at 07:00.0 (behind 00:1c.2) and 08:00.0 (behind 00:1c.1), driver r8169, netdevs "
             "enp7s0/enp8s0, 2.5 GT/s x1 each; root port 00:1c.0 is empty (LnkSta width x0).")
    t.ncpus = 8
    cfgs = load_lspci_hex(SRC_ICH10)
    irqs = legacy_irqs(8, False, extra=[(16, 16, "fasteoi", "uhci_hcd:usb3", [0] * 8)])
    for bdf in ("00:1c.0", "00:1c.1", "00:1c.2"):
        c = cfgs[bdf]
        t.pci("pci0000:00/0000:" + bdf, vendor=rd16(c, 0), device=rd16(c, 2), cls=0x060400,
              rev=c[8], sv=rd16(c, find_cap(c, 0x0D) + 4), sd=rd16(c, find_cap(c, 0x0D) + 6),
              irq=c[0x3C], config=c, driver="pcieport", link=sysfs_link(c))
    nic = {"07:00.0": ("00:1c.2", "enp7s0", 27, "00:1a:92:3e:55:a1", 2),
           "08:00.0": ("00:1c.1", "enp8s0", 28, "00:1a:92:3e:55:a2", 3)}
    for bdf, (rp, name, irq, mac, ifx) in nic.items():
        c = cfgs[bdf]
        bus = int(bdf[:2], 16)
        assert cfgs[rp][0x19] == bus
        d = t.pci("pci0000:00/0000:%s/0000:%s" % (rp, bdf), vendor=rd16(c, 0), device=rd16(c, 2),
                  cls=0x020000, rev=c[8], sv=rd16(c, 0x2C), sd=rd16(c, 0x2E), irq=irq,
                  config=c, driver="r8169", link=sysfs_link(c), msi=[(irq, "msi")])
        t.netdev(d, name, mac=mac, ifindex=ifx, speed=1000, duplex="full", rxq=1, txq=1,
                 stats={"rx_bytes": 812345678 * (ifx - 1), "tx_bytes": 98765432 * (ifx - 1),
                        "rx_packets": 1234567 * (ifx - 1), "tx_packets": 456789 * (ifx - 1),
                        "rx_missed_errors": 0})
        t.ethtool(name, {"driver": "r8169", "version": "6.1.0-18-amd64",
                         "bus_info": "0000:" + bdf,
                         "link": {"speed_mbps": 1000, "duplex": "full", "autoneg": True,
                                  "port": "MII", "supported": IGB_MODES, "advertised": IGB_MODES,
                                  "source": "GLINKSETTINGS"},
                         "perm_addr": mac,
                         "errors": {"channels": "operation not supported"}})
        cnt = [0] * 8
        cnt[2 if name == "enp7s0" else 0] = 9123456 if name == "enp7s0" else 3210
        eff = "2" if name == "enp7s0" else "0"
        irqs.append(msi_irq(irq, bus, 0, 0, 0, name, cnt, ir=False, aff="0-7", eff=eff))
    rx = [31000 + 500 * j for j in range(8)]
    rx[2] = 9011234
    soft = [(30500 + 300 * j, 0, 0, 0) for j in range(8)]
    soft[2] = (9120345, 312, 20877, 0)
    t.proc(prec=3, irqs=irqs, arch=x86_arch_lines(8, 2700000, with_dfr=False),
           stat_cpu=stat_rows(8, {2: (20100, 30100, 0, 402000)}),
           softirqs=softirq_rows(8, rx, [1100 + 10 * j for j in range(8)]), softnet=soft,
           nr_irqs=488, ctxt=98765432, procs=23456)
    t.note("The 4096-byte configs of 00:1c.0/1/2, 07:00.0 and 08:00.0 are the dump's bytes "
           "unchanged. Topology comes from the root ports' secondary bus numbers in that hex "
           "(1c.0 -> 09 (empty), 1c.1 -> 08, 1c.2 -> 07). sysfs link files are decoded from it: "
           "RTL8111 2.5 GT/s x1 both; 00:1c.1/2 current 2.5 GT/s PCIe x1, max 2.5 GT/s PCIe x1; "
           "00:1c.0 current width 0 (no device), speed 2.5 GT/s PCIe.")
    t.note("Not in the dump: kernel (strings in the >= 5.2 format; ethtool version "
           "6.1.0-18-amd64), CPU count 8 (Core i7-9xx 4C/8T), numa_node -1, IRQ numbers, "
           "netdev names enp7s0/enp8s0, MACs (ASUS OUI 00:1a:92, invented), ifindex, speed 1000 "
           "full, firmware (r8169 reports the rtl_fw name; empty here as for chips needing none), "
           "port MII (r8169 uses phylib), channels unsupported. The dump shows MSI enabled (MSI-X "
           "present but disabled), so each RTL8111 has one MSI vector (27, 28; the sysfs irq file "
           "shows it) named after the netdev; the root ports have MSI disabled and keep their "
           "INTx lines (irq 5/11/10 from the config's interrupt line byte).")
    t.note("proc/*: synthetic counters (layout from the node_exporter/procfs fixtures): enp7s0's "
           "single vector is on CPU 2 and CPU 2 carries the NET_RX softirq load with time "
           "squeezes (a 'one CPU does the packet work' example); enp8s0 is idle.")
    return t


@tree
def t_connectx3pro_haswell():
    t = Tree("connectx3pro-haswell",
             "https://github.com/pciutils/pciutils/blob/0f5b941aa5cf8b1b126ff3e4176b1c32b2158289/tests/cap-aer-root",
             "Haswell-E root port 00:02.0 [8086:2f04] and Mellanox ConnectX-3 Pro [15b3:1007] subsys "
             "Google 1ae0:0034 at 03:00.0, driver mlx4_core (netdev enp3s0 by mlx4_en), 8 GT/s x8 on "
             "both ends: the healthy negative control.")
    t.ncpus = 12
    cfgs = load_lspci_hex("lspci-vvvxxx-connectx3pro-haswell-rootport-pciutils-tests-cap-aer-root.txt")
    rp, ep = cfgs["00:02.0"], cfgs["03:00.0"]
    p = find_cap(rp, 0x0D)
    t.pci("pci0000:00/0000:00:02.0", vendor=0x8086, device=0x2F04, cls=0x060400, rev=rp[8],
          sv=rd16(rp, p + 4), sd=rd16(rp, p + 6), irq=11, config=rp, driver="pcieport",
          link=sysfs_link(rp))
    msix = list(range(40, 40 + 13))
    d = t.pci("pci0000:00/0000:00:02.0/0000:03:00.0", vendor=0x15B3, device=0x1007, cls=0x020000,
              rev=ep[8], sv=rd16(ep, 0x2C), sd=rd16(ep, 0x2E), irq=11, config=ep,
              driver="mlx4_core", link=sysfs_link(ep), msi=[(v, "msix") for v in msix])
    mac = "00:1a:11:4c:3c:70"
    t.netdev(d, "enp3s0", mac=mac, ifindex=2, speed=40000, duplex="full", rxq=12, txq=12,
             xps=[cpumask([q], 12) for q in range(12)])
    t.ethtool("enp3s0", {"driver": "mlx4_en", "version": "4.0-0", "firmware_version": "2.42.5000",
                         "bus_info": "0000:03:00.0",
                         "link": {"speed_mbps": 40000, "duplex": "full", "autoneg": False,
                                  "port": "DA",
                                  "supported": ["1000baseKX/Full", "10000baseKX4/Full",
                                                "10000baseKR/Full", "40000baseKR4/Full",
                                                "40000baseCR4/Full", "40000baseSR4/Full"],
                                  "advertised": ["1000baseKX/Full", "10000baseKX4/Full",
                                                 "10000baseKR/Full", "40000baseKR4/Full",
                                                 "40000baseCR4/Full", "40000baseSR4/Full"],
                                  "source": "GLINKSETTINGS"},
                         "channels": {"max_rx": 128, "max_tx": 32, "max_other": 0,
                                      "max_combined": 0, "rx": 12, "tx": 12, "other": 0,
                                      "combined": 0},
                         "perm_addr": mac})
    t.note("Both 4096-byte configs are the dump's bytes unchanged (the file name says -xxx but the "
           "test file carries the full 4 KiB); sysfs link files are decoded from them: 8.0 GT/s "
           "PCIe x8 current and max on both; root port subsystem from its SSVID capability.")
    t.note("Not in the dump: 12 CPUs (Haswell-E 6C/12T), numa_node -1, IRQ numbers (11 is the "
           "dump's INTx line of both; the root port's MSI is disabled in the dump, so it has no "
           "msi_irqs), 13 MSI-X vectors (mlx4: 1 async + 12 completion), netdev name "
           "enp3s0 (one port shown; the Google card's port count is unknown), MAC derived from "
           "the DSN 00-1a-11-ff-fe-4c-3c-70, speed 40000 full, link modes, firmware 2.42.5000, "
           "driver version 4.0-0, channels, XPS one CPU per TX queue. No /proc files.")
    return t


@tree
def t_nvme_gen5_at_gen4():
    t = Tree("nvme-gen5-at-gen4",
             "https://github.com/pciutils/pciutils/blob/0f5b941aa5cf8b1b126ff3e4176b1c32b2158289/tests/cap-phy32",
             "Samsung PM174X NVMe [144d:a826] at 2e:00.0: LnkCap 32 GT/s x2, LnkSta 16 GT/s x2 "
             "(speed-only downgrade). Not a NIC: decoder/parser test, no netdev.")
    t.ncpus = 32
    ep = load_lspci_hex("lspci-vvvxxx-nvme-downgraded-32to16GTs-pciutils-tests-cap-phy32.txt")["2e:00.0"]
    rp = build_config(0x1022, 0x14AB, 0x060400, 0x00, bridge=(0x20, 0x2E, 0x2E), command=0x0407,
                      caps=[(0x50, cap_pm(pmc=0xC803)),
                            (0x58, cap_pcie(4, 512, 256, 512, 5, 4, 4, 2, port=1, slot=True,
                                            dlactive=True, dllla=True, bwnot=True,
                                            linkcap2=0x3E, target=5)),
                            (0xA0, cap_msi(is64=True, enabled=True, addr=0xFEE00000)),
                            (0xC0, cap_ssvid(0x1022, 0x14AB))],
                      size=256)
    t.pci("pci0000:20/0000:20:01.1", vendor=0x1022, device=0x14AB, cls=0x060400, rev=0x00,
          sv=0x1022, sd=0x14AB, numa=0, irq=40, config=rp, driver="pcieport",
          link=dict(cur_speed="16.0 GT/s PCIe", cur_width=2, max_speed="32.0 GT/s PCIe",
                    max_width=4), msi=[(40, "msi")])
    t.pci("pci0000:20/0000:20:01.1/0000:2e:00.0", vendor=0x144D, device=0xA826, cls=0x010802,
          rev=ep[8], sv=rd16(ep, 0x2C), sd=rd16(ep, 0x2E), numa=0, irq=17, config=ep,
          driver="nvme", link=sysfs_link(ep),
          sriov=dict(total=64, num=0, offset=32, stride=1, vfdev=0xA826 + 0))
    t.note("The NVMe's 4096-byte config is the dump's bytes unchanged; its sysfs link files "
           "(current 16.0 GT/s PCIe x2, max 32.0 GT/s PCIe x2) are decoded from it.")
    t.note("Root port 0000:20:01.1 is not in the dump: an AMD Genoa GPP bridge [1022:14ab] with "
           "LnkCap 32 GT/s x4, LnkSta 16 GT/s x2 (the trained link), 256-byte config built by "
           "gen.py; the host (32 CPUs, NUMA node 0, domain pci0000:20, IRQ 40 of the port) "
           "is invented. The width difference (port x4, device x2) is the device's own LnkCap; "
           "the speed is the only real downgrade. The dump shows MSI-X disabled (driver nvme bound), so "
           "the NVMe has no msi_irqs and irq 17 (the dump's). SR-IOV attributes (total 64, offset 32, stride 1, "
           "VF device a826, none enabled) are decoded from the dump's SR-IOV capability.")
    return t


@tree
def t_empty_ports_x0():
    t = Tree("empty-ports-x0", URL_EB1035,
             "ASUS EB1035 mini-PC (Ivy Bridge + 7-series PCH, kernel 6.1): root ports 00:01.0 (PEG, "
             "LnkCap 5 GT/s x16) and 00:1c.0 (LnkCap 5 GT/s x1) are empty and print "
             "'Speed 2.5GT/s (downgraded), Width x0 (downgraded)'; 00:1c.1 has a device on bus 03 at "
             "2.5 GT/s x1 under a 5 GT/s x1 port. Nothing here should be reported.")
    t.ncpus = 2
    peg = build_config(0x8086, 0x0101, 0x060400, 0x09, bridge=(0, 1, 1), command=0x0407,
                       irq_line=24, irq_pin=1,
                       caps=[(0x88, cap_ssvid(0x1043, 0x844D)), (0x80, cap_pm(pmc=0xC803)),
                             (0x90, cap_msi(is64=False, enabled=True, addr=0xFEE01004, data=0x21)),
                             (0xA0, cap_pcie(4, 128, 128, 128, 2, 16, 1, 0, port=2, slot=True,
                                             dlactive=False, bwnot=True, target=1, l0s=4, l1=2))],
                       size=256)
    rp0 = build_config(0x8086, 0x1E10, 0x060400, 0xC4, multi=True, bridge=(0, 2, 2),
                       command=0x0407, irq_line=16, irq_pin=1,
                       caps=[(0x40, cap_pcie(4, 128, 128, 128, 2, 1, 1, 0, port=1, slot=True,
                                             dlactive=False, dllla=True, target=1, l0s=4, l1=4)),
                             (0x80, cap_msi(is64=False)), (0x90, cap_ssvid(0x1043, 0x844D)),
                             (0xA0, cap_pm(pmc=0xC802, pmcsr=0))],
                       size=256)
    p = find_cap(rp0, 0x10)
    wr16(rp0, p + 0x12, rd16(rp0, p + 0x12) | 0x0800)  # Train+
    rp1 = build_config(0x8086, 0x1E12, 0x060400, 0xC4, multi=True, bridge=(0, 3, 3),
                       command=0x0407, irq_line=17, irq_pin=2,
                       caps=[(0x40, cap_pcie(4, 128, 128, 128, 2, 1, 1, 1, port=2, slot=True,
                                             dlactive=True, dllla=True, target=2, l0s=3, l1=4)),
                             (0x80, cap_msi(is64=False)), (0x90, cap_ssvid(0x1043, 0x844D)),
                             (0xA0, cap_pm(pmc=0xC802, pmcsr=0))],
                       size=256)
    p = find_cap(rp1, 0x10)
    wr16(rp1, p + 0x12, rd16(rp1, p + 0x12) | 0x4000)  # BWMgmt+
    t.pci("pci0000:00/0000:00:01.0", vendor=0x8086, device=0x0101, cls=0x060400, rev=0x09,
          sv=0x1043, sd=0x844D, irq=24, config=peg, driver="pcieport", msi=[(24, "msi")],
          link=dict(cur_speed="2.5 GT/s PCIe", cur_width=0, max_speed="5.0 GT/s PCIe",
                    max_width=16))
    t.pci("pci0000:00/0000:00:1c.0", vendor=0x8086, device=0x1E10, cls=0x060400, rev=0xC4,
          sv=0x1043, sd=0x844D, irq=16, config=rp0, driver="pcieport",
          link=dict(cur_speed="2.5 GT/s PCIe", cur_width=0, max_speed="5.0 GT/s PCIe", max_width=1))
    t.pci("pci0000:00/0000:00:1c.1", vendor=0x8086, device=0x1E12, cls=0x060400, rev=0xC4,
          sv=0x1043, sd=0x844D, irq=17, config=rp1, driver="pcieport",
          link=dict(cur_speed="2.5 GT/s PCIe", cur_width=1, max_speed="5.0 GT/s PCIe", max_width=1))
    t.note("All three 256-byte configs are rebuilt by gen.py from the decoded `lspci -vvnn` text "
           "(the probe has no hex): IDs, revision, header type, bus numbers, capability offsets "
           "and order, SSVID 1043:844d, DevCap/DevCtl MPS 128 / MRRS 128, LnkCap speed/width/"
           "port, LnkSta speed/width and the DLActive/Train/BWMgmt/SlotClk bits, Slot+, "
           "LnkCtl2 target speed. Fields the text prints but that nicdiag does not use (ASPM "
           "exit latencies beyond the LnkCap code, slot power, VC/RCLink extended caps, BARs) are "
           "approximate or absent; no extended config space (256 bytes).")
    t.note("sysfs link files are what kernel 6.1 prints for these registers: current 2.5 GT/s "
           "PCIe width 0 on the two empty ports, current 2.5 GT/s PCIe x1 on 00:1c.1; max from "
           "LnkCap (5.0 GT/s PCIe, 16 / 1 / 1).")
    t.note("The device on bus 03 behind 00:1c.1 is not identified by the excerpt, so no endpoint "
           "is invented: the snapshot holds the three root ports only. numa_node -1, 2 CPUs "
           "(Celeron), irq numbers from the decoded 'routed to IRQ' lines; no netdevs, no /proc.")
    return t


@tree
def t_i225_nonroot():
    t = Tree("i225-nonroot",
             "https://github.com/linuxhw/LsPCI/blob/28198bc06e2ea64dc579adb73bb9a75b0b784bcf/Desktop/"
             "ASUSTek%20Computer/TUF/TUF%20Gaming%20X570-PRO/B24147C07140/XUBUNTU-20.04/"
             "5.13.0-30-GENERIC/X86_64/54C4F70C98",
             "ASUS TUF Gaming X570-PRO as a non-root user sees it: Intel I225-V rev 03 [8086:15f3] "
             "subsys 1043:87d2 at 04:00.0, driver igc, behind X570 chipset bridge 02:05.0 "
             "[1022:57a3]. Every `config` is the 64-byte header a non-root reader gets; link "
             "facts come only from the sysfs link files.")
    t.ncpus = 16
    up = build_config(0x1022, 0x1483, 0x060400, 0x00, bridge=(0, 1, 0x0A), command=0x0407,
                      caps=[(0x50, b"\x01\x00\x03\xc8\x08\x00\x00\x00")], size=64)
    sw = build_config(0x1022, 0x57AD, 0x060400, 0x00, bridge=(1, 2, 0x0A), command=0x0407,
                      caps=[(0x50, b"\x01\x00\x03\xc8\x08\x00\x00\x00")], size=64)
    dp = build_config(0x1022, 0x57A3, 0x060400, 0x00, bridge=(2, 4, 4), command=0x0407,
                      irq_line=0xFF, irq_pin=0, caps=[(0x50, b"\x01")], size=64)
    wr16(dp, 0x20, 0xFC60)
    wr16(dp, 0x22, 0xFC70)
    wr16(dp, 0x1C, 0x00F0)
    nic = build_config(0x8086, 0x15F3, 0x020000, 0x03, sv=0x1043, sd=0x87D2, command=0x0406,
                       bars=(0xFC600000, 0, 0, 0xFC700000), irq_line=0xFF, irq_pin=1,
                       caps=[(0x40, b"\x01")], size=64)
    t.pci("pci0000:00/0000:00:01.2", vendor=0x1022, device=0x1483, cls=0x060400, rev=0, sv=0x1043,
          sd=0x87C0, irq=28, config=up, driver="pcieport",
          link=dict(cur_speed="16.0 GT/s PCIe", cur_width=4, max_speed="16.0 GT/s PCIe", max_width=4))
    t.pci("pci0000:00/0000:00:01.2/0000:01:00.0", vendor=0x1022, device=0x57AD, cls=0x060400,
          rev=0, sv=0, sd=0, irq=0, config=sw, driver="pcieport",
          link=dict(cur_speed="16.0 GT/s PCIe", cur_width=4, max_speed="16.0 GT/s PCIe", max_width=4))
    t.pci("pci0000:00/0000:00:01.2/0000:01:00.0/0000:02:05.0", vendor=0x1022, device=0x57A3,
          cls=0x060400, rev=0, sv=0x1043, sd=0x87C0, irq=31, config=dp, driver="pcieport",
          link=dict(cur_speed="5.0 GT/s PCIe", cur_width=1, max_speed="16.0 GT/s PCIe", max_width=1))
    vecs = list(range(60, 65))
    d = t.pci("pci0000:00/0000:00:01.2/0000:01:00.0/0000:02:05.0/0000:04:00.0", vendor=0x8086,
              device=0x15F3, cls=0x020000, rev=0x03, sv=0x1043, sd=0x87D2, irq=33, config=nic,
              driver="igc", msi=[(v, "msix") for v in vecs],
              link=dict(cur_speed="5.0 GT/s PCIe", cur_width=1, max_speed="5.0 GT/s PCIe", max_width=1))
    mac = "24:4b:fe:8a:11:07"
    t.netdev(d, "enp4s0", mac=mac, ifindex=2, speed=2500, duplex="full", rxq=4, txq=4)
    modes = ["10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full", "1000baseT/Full",
             "2500baseT/Full"]
    t.ethtool("enp4s0", {"driver": "igc", "version": "5.13.0-30-generic",
                         "firmware_version": "1082:8770", "bus_info": "0000:04:00.0",
                         "link": {"speed_mbps": 2500, "duplex": "full", "autoneg": True,
                                  "port": "TP", "supported": modes, "advertised": modes,
                                  "source": "GLINKSETTINGS"},
                         "channels": {"max_rx": 0, "max_tx": 0, "max_other": 1,
                                      "max_combined": 4, "rx": 0, "tx": 0, "other": 1,
                                      "combined": 4},
                         "perm_addr": mac})
    t.note("Every `config` is 64 bytes (what a non-root reader of sysfs gets) and is rebuilt by "
           "gen.py from the decoded text: IDs, revision, class, header type, Control/Status bits "
           "(Cap+, so byte 0x34 holds the first capability pointer, whose target lies beyond the "
           "64 bytes), bus numbers 02/04/04 and the memory window fc600000-fc7fffff of 02:05.0, "
           "the I225's BAR0 fc600000 and BAR3 fc700000, interrupt pins. The probe shows "
           "'Capabilities: <access denied>', so there is no LnkCap/LnkSta anywhere.")
    t.note("The upstream path 00:01.2 [1022:1483] -> 01:00.0 [1022:57ad] -> 02:05.0 is the usual "
           "X570 layout (Matisse GPP bridge, chipset switch upstream port) but is not in the "
           "excerpt, which shows only 02:05.0 and 04:00.0; subsystem 1043:87c0 on the AMD bridges "
           "is invented.")
    t.note("sysfs link files (readable without root) are not in the probe either: I225-V 5.0 GT/s "
           "PCIe x1 current and max (the chip is PCIe 2.1 x1), 02:05.0 max 16.0 GT/s PCIe x1 "
           "(X570 chipset ports are Gen4) current 5.0 GT/s x1, the chipset uplink 16.0 GT/s x4. "
           "Host: 16 CPUs, numa -1, IRQ 31/33 from the decoded text, MSI-X vectors 60-64 (igc: "
           "enp4s0 + 4 TxRx queues), speed 2500 full, modes, NVM version '1082:8770', netdev "
           "name enp4s0, MAC (ASUS OUI) invented. No /proc.")
    return t


@tree
def t_xeon_i350_sriov_bcm5709():
    src = ("https://github.com/jaypipes/ghw/blob/fedd4fe4a350eaaf0b09367c752f5a657314ad56/"
           "testdata/snapshots/linux-amd64-8581cf3a529e5d8b97ea876eade2f60d.tar.gz")
    t = Tree("xeon-i350-sriov-bcm5709", src,
             "Dual-socket Xeon server (Dell PowerEdge R610: BCM5709 subsys 1028:0236), 24 CPUs: four "
             "onboard Broadcom BCM5709 ports [14e4:1639] (bnx2, eno1-eno4) and an I350 [8086:1521] "
             "dual-port PF pair 05:00.0/.1 (igb) with 4 SR-IOV VFs each [8086:1520] (igbvf) at "
             "05:10.x/05:11.x: 14 netdevs. Used for the List benchmark (>= 8 NICs).")
    t.ncpus = 24
    even = list(range(0, 24, 2))
    odd = list(range(1, 24, 2))
    rps = {"00:01.0": (0x3408, 1), "00:03.0": (0x340A, 3), "00:07.0": (0x340E, 7)}
    for bdf, (dev, port) in rps.items():
        sec = {"00:01.0": 1, "00:03.0": 2, "00:07.0": 5}[bdf]
        c = build_config(0x8086, dev, 0x060400, 0x13, bridge=(0, sec, sec), command=0x0407,
                         caps=[(0x40, cap_ssvid(0x1028, 0x0236)),
                               (0x60, cap_msi(is64=False, enabled=True)),
                               (0x90, cap_pcie(4, 256, 256, 128, 2, 4, 2, 4, port=port, slot=False,
                                               dlactive=True, dllla=True, target=2)),
                               (0xE0, cap_pm())], size=64)
        t.pci("pci0000:00/0000:" + bdf, vendor=0x8086, device=dev, cls=0x060400, rev=0x13,
              sv=0x1028, sd=0x0236, numa=-1, irq=64 + port, config=c, driver="pcieport",
              link=dict(cur_speed="5.0 GT/s PCIe", cur_width=4, max_speed="5.0 GT/s PCIe",
                        max_width=4), msi=[(64 + port, "msi")])
    irqs = legacy_irqs(24, True, extra=[(16, 16, "fasteoi", "uhci_hcd:usb1", [0] * 24)])
    for bdf, (dev, port) in rps.items():
        irqs.append(msi_irq(64 + port, 0, int(bdf[3:5], 16), 0, 0, "PCIe PME, aerdrv", [0] * 24,
                            ir=True, aff="0-23", eff="0"))
    names = {"01:00.0": ("00:01.0", "eno1", 31), "01:00.1": ("00:01.0", "eno2", 32),
             "02:00.0": ("00:03.0", "eno3", 33), "02:00.1": ("00:03.0", "eno4", 34)}
    next_irq = 72
    ifindex = 2
    for bdf, (rp, name, intx) in names.items():
        bus, fn = int(bdf[:2], 16), int(bdf[-1])
        c = build_config(0x14E4, 0x1639, 0x020000, 0x20, sv=0x1028, sd=0x0236, multi=True,
                         command=0x0406, bars=(0xD2000004 + (bus * 2 + fn) * 0x2000000,),
                         irq_line=intx, irq_pin=1 + fn, caps=[(0x48, b"\x01")], size=64)
        vecs = list(range(next_irq, next_irq + 9))
        next_irq += 9
        d = t.pci("pci0000:00/0000:%s/0000:%s" % (rp, bdf), vendor=0x14E4, device=0x1639,
                  cls=0x020000, rev=0x20, sv=0x1028, sd=0x0236, numa=-1, irq=intx, config=c,
                  driver="bnx2", msi=[(v, "msix") for v in vecs],
                  link=dict(cur_speed="5.0 GT/s PCIe", cur_width=4, max_speed="5.0 GT/s PCIe",
                            max_width=4))
        mac = "00:24:e8:6b:%02x:%02x" % (0x10 + bus, 0x20 + fn)
        up = name in ("eno1", "eno2")
        if name == "eno4":
            # administratively down: speed/duplex/carrier read as EINVAL, so a snapshot lacks them
            t.netdev(d, name, mac=mac, ifindex=ifindex, oper="down", carrier=None, rxq=8, txq=8,
                     dev_port=0)
            t.attr("sys/devices/pci0000:00/0000:%s/0000:%s/net/%s/flags" % (rp, bdf, name),
                   "0x1002")
        else:
            t.netdev(d, name, mac=mac, ifindex=ifindex, speed=1000 if up else -1,
                     duplex="full" if up else "unknown", oper="up" if up else "down",
                     carrier=1 if up else 0, rxq=8, txq=8)
        link = ({"speed_mbps": 1000 if up else -1, "duplex": "full" if up else "unknown",
                 "autoneg": True, "port": "TP", "supported": IGB_MODES[:4] + ["1000baseT/Full"],
                 "advertised": IGB_MODES[:4] + ["1000baseT/Full"], "source": "GLINKSETTINGS"})
        ans = {"driver": "bnx2", "version": "2.2.6", "firmware_version": "bc 5.2.3 NCSI 2.0.12",
               "bus_info": "0000:" + bdf, "link": link,
               "channels": {"max_rx": 8, "max_tx": 8, "max_other": 0, "max_combined": 8,
                            "rx": 0, "tx": 0, "other": 0, "combined": 8},
               "perm_addr": mac}
        if name == "eno4":
            ans["link"] = {"speed_mbps": -1, "duplex": "unknown", "autoneg": True, "port": "TP",
                           "supported": link["supported"], "advertised": link["advertised"],
                           "source": "GLINKSETTINGS"}
        t.ethtool(name, ans)
        for i, v in enumerate(vecs):
            cnt = [0] * 24
            if up:
                cnt[(i * 2 + bus) % 24] = 412345 + 1000 * i
            eff = str((i * 2 + bus) % 24)
            irqs.append(msi_irq(v, bus, 0, fn, i, "%s-%d" % (name, i), cnt, ir=True, aff="0-23",
                                eff=eff))
        ifindex += 1
    # I350 PFs and VFs
    pf_irqs = {0: 35, 1: 45}
    pf_numa = {0: 0, 1: 1}
    pf_cpus = {0: even, 1: odd}
    vfs = {0: ["05:10.0", "05:10.4", "05:11.0", "05:11.4"],
           1: ["05:10.1", "05:10.5", "05:11.1", "05:11.5"]}
    for fn in (0, 1):
        pf = "pci0000:00/0000:00:07.0/0000:05:00.%d" % fn
        c = build_config(0x8086, 0x1521, 0x020000, 0x01, sv=0xFFFF, sd=0x0000, multi=True,
                         command=0x0406, bars=(0xD8000000 + fn * 0x100000, 0, 0x0000E001 - 0x20 * fn,
                                               0xD8200000 + fn * 0x4000),
                         irq_line=pf_irqs[fn], irq_pin=1 + fn, caps=[(0x40, b"\x01")], size=64)
        vecs = [next_irq, next_irq + 1]
        next_irq += 2
        name = "enp5s0f%d" % fn
        d = t.pci(pf, vendor=0x8086, device=0x1521, cls=0x020000, rev=0x01, sv=0xFFFF, sd=0x0000,
                  numa=pf_numa[fn], cpus=pf_cpus[fn], irq=pf_irqs[fn], config=c, driver="igb",
                  msi=[(v, "msix") for v in vecs],
                  link=dict(cur_speed="5.0 GT/s PCIe", cur_width=4, max_speed="5.0 GT/s PCIe",
                            max_width=4),
                  sriov=dict(total=7, num=4, offset=128, stride=4, vfdev=0x1520))
        mac = "a0:36:9f:3a:7c:%02x" % (0x60 + fn)
        t.netdev(d, name, mac=mac, ifindex=ifindex, speed=1000, duplex="full", rxq=1, txq=1)
        ifindex += 1
        t.ethtool(name, {"driver": "igb", "version": "5.6.0-k",
                         "firmware_version": "1.63, 0x800009fa", "bus_info": "0000:05:00.%d" % fn,
                         "link": {"speed_mbps": 1000, "duplex": "full", "autoneg": True,
                                  "port": "TP", "supported": IGB_MODES, "advertised": IGB_MODES,
                                  "source": "GLINKSETTINGS"},
                         "channels": {"max_rx": 0, "max_tx": 0, "max_other": 1, "max_combined": 1,
                                      "rx": 0, "tx": 0, "other": 1, "combined": 1},
                         "perm_addr": mac})
        irqs.append(msi_irq(vecs[0], 5, 0, fn, 0, name, [5] + [0] * 23, ir=True,
                            aff=cpulist(pf_cpus[fn]), eff=str(pf_cpus[fn][0]), node=pf_numa[fn]))
        cnt = [0] * 24
        cnt[pf_cpus[fn][1]] = 8123456 + fn
        irqs.append(msi_irq(vecs[1], 5, 0, fn, 1, name + "-TxRx-0", cnt, ir=True,
                            aff=cpulist(pf_cpus[fn]), eff=str(pf_cpus[fn][1]), node=pf_numa[fn]))
        for i, vbdf in enumerate(vfs[fn]):
            dev, vfn = int(vbdf[3:5], 16), int(vbdf[-1])
            vpath = "pci0000:00/0000:00:07.0/0000:" + vbdf
            vc = bytearray(build_config(0xFFFF, 0xFFFF, 0x020000, 0x01, sv=0xFFFF, sd=0x0000,
                                        command=0x0406, bars=(0, 0, 0, 0), irq_line=0, irq_pin=0,
                                        caps=[(0x70, b"\x11")], size=64))
            vecs = [next_irq, next_irq + 1, next_irq + 2]
            next_irq += 3
            vname = "enp5s%d" % dev + ("f%d" % vfn if vfn else "")
            vd = t.pci(vpath, vendor=0x8086, device=0x1520, cls=0x020000, rev=0x01, sv=0xFFFF,
                       sd=0x0000, numa=pf_numa[fn], cpus=pf_cpus[fn], irq=0, config=vc,
                       driver="igbvf", msi=[(v, "msix") for v in vecs], physfn=pf,
                       link=dict(cur_speed="Unknown", cur_width=0, max_speed="Unknown",
                                 max_width=0))
            t.virtfn(pf, i, vpath)
            vmac = "02:00:05:%02x:%02x:%02x" % (fn, dev, vfn)
            t.netdev(vd, vname, mac=vmac, ifindex=ifindex, speed=1000, duplex="full", rxq=1, txq=1)
            ifindex += 1
            t.ethtool(vname, {"driver": "igbvf", "version": "2.4.0-k",
                              "bus_info": "0000:" + vbdf,
                              "link": {"speed_mbps": 1000, "duplex": "full", "autoneg": False,
                                       "port": "Other", "source": "GLINKSETTINGS"},
                              "perm_addr": "00:00:00:00:00:00",
                              "errors": {"channels": "operation not supported"}})
            for k, suffix in enumerate(("-rx-0", "-tx-0", "")):
                cnt = [0] * 24
                if suffix:
                    cnt[pf_cpus[fn][2 + i]] = 120034 + 100 * i
                irqs.append(msi_irq(vecs[k], 5, dev, vfn, k, vname + suffix, cnt, ir=True,
                                    aff=cpulist(pf_cpus[fn]), eff=str(pf_cpus[fn][2 + i]),
                                    node=pf_numa[fn]))
    rx = [61000 + 900 * j for j in range(24)]
    soft = [(60000 + 800 * j, 0, 3 * j, 0) for j in range(24)]
    t.proc(prec=4, irqs=irqs, arch=x86_arch_lines(24, 8800000), stat_cpu=stat_rows(24, {}),
           softirqs=softirq_rows(24, rx, [3000 + 20 * j for j in range(24)]), softnet=soft,
           nr_irqs=1432, softnet_cols=11, ctxt=923456789, procs=345678)
    t.note("From the ghw snapshot (real): every function's vendor, device, class, revision, "
           "numa_node (including the I350 PF 05:00.0 on node 0 and 05:00.1 on node 1, as captured), "
           "local_cpulist (interleaved 0,2,..22 / 1,3,..23), irq (31-35, 45; 0 on VFs), subsystem "
           "ids from modalias (1028:0236 on the BCM5709s, ffff:0000 on the I350 and its VFs), "
           "drivers bnx2/igb/igbvf and the VF addresses 05:10.0/.1/.4/.5 and 05:11.0/.1/.4/.5.")
    t.note("Topology is not in the ghw snapshot (it keeps attributes, not paths): root ports "
           "00:01.0 [8086:3408], 00:03.0 [8086:340a], 00:07.0 [8086:340e] (Intel 5520 IOH ports "
           "1/3/7, rev 0x13, as in an R610) with secondary buses 01, 02, 05 are reconstructed, "
           "as are their 64-byte configs and all link files (5.0 GT/s PCIe x4 everywhere: "
           "BCM5709 and I350 are Gen2 x4 parts). VF link files read 'Unknown' / 0, as the kernel "
           "prints them for a VF (its LnkCap/LnkSta are reserved, zero).")
    t.note("VF-to-PF mapping follows the I350 SR-IOV offset 128 / stride 4: PF0 -> 05:10.0, "
           "05:10.4, 05:11.0, 05:11.4 (virtfn0-3); PF1 -> 05:10.1, 05:10.5, 05:11.1, 05:11.5. "
           "sriov_numvfs 4 (that many VFs exist), sriov_totalvfs 7 (igb's limit). VF `config` "
           "files read ffff:ffff as vendor/device, as the SR-IOV spec makes VFs answer; the "
           "sysfs vendor/device files hold 8086:1520.")
    t.note("64-byte configs of all functions are built by gen.py from the IDs (no hex in the "
           "snapshot). Netdev names (eno1-4, enp5s0f0/1, enp5s16[fN]/enp5s17[fN]), MACs, ifindex, "
           "link states (eno1/eno2 up 1000 full, eno3 no carrier: speed -1 duplex unknown, eno4 "
           "administratively down: no speed/duplex/carrier files, as reading them fails), kernel "
           "5.4-era driver versions (bnx2 2.2.6, igb 5.6.0-k, igbvf 2.4.0-k), firmware strings, "
           "MSI-X vector counts and names (bnx2 'eno1-0'..'eno1-8'; igb with VFs has one queue: "
           "'enp5s0f0', 'enp5s0f0-TxRx-0'; igbvf 'NAME-rx-0', 'NAME-tx-0', 'NAME') are invented.")
    t.note("proc/*: synthetic counters; prec 4 (nr_irqs > 1000 on this host), 11-column "
           "softnet_stat (kernel 5.4 has no backlog/cpu columns), IR-PCI-MSI chips.")
    return t


@tree
def t_virtio_kvm():
    src = ("https://github.com/jaypipes/ghw/blob/fedd4fe4a350eaaf0b09367c752f5a657314ad56/"
           "testdata/snapshots/linux-amd64-accel.tar.gz")
    t = Tree("virtio-kvm", src,
             "KVM guest with 2 vCPUs: virtio-net [1af4:1041] (virtio 1.0) at 01:00.0 behind QEMU "
             "root port 00:02.0 [1b36:000c]; PCI driver virtio-pci, netdev eth0 lives under the "
             "virtio0 device (driver virtio_net); speed unknown (-1), duplex unknown.")
    t.ncpus = 2
    rp = build_config(0x1B36, 0x000C, 0x060400, 0x00, multi=True, bridge=(0, 1, 1),
                      command=0x0407, irq_line=22, irq_pin=1,
                      caps=[(0x54, cap_pcie(4, 128, 128, 512, 4, 32, 1, 1, port=16, slot=True,
                                            dlactive=True, dllla=True, linkcap2=0x1E, target=4,
                                            aspm_sup=0)),
                            (0x48, cap_msix(1, 0, 0, 0x800)),
                            (0x40, cap_pm())], size=256)
    t.pci("pci0000:00/0000:00:02.0", vendor=0x1B36, device=0x000C, cls=0x060400, rev=0x00,
          sv=0x1B36, sd=0x0000, irq=22, config=rp, driver="pcieport", msi=[(24, "msix")],
          link=dict(cur_speed="2.5 GT/s PCIe", cur_width=1, max_speed="16.0 GT/s PCIe",
                    max_width=32))
    vecs = [25, 26, 27]
    d = t.pci("pci0000:00/0000:00:02.0/0000:01:00.0", vendor=0x1AF4, device=0x1041,
              cls=0x020000, rev=0x01, sv=0x1AF4, sd=0x1100, irq=22, driver="virtio-pci",
              msi=[(v, "msix") for v in vecs],
              link=dict(cur_speed="2.5 GT/s PCIe", cur_width=1, max_speed="2.5 GT/s PCIe",
                        max_width=1))
    v = d + "/virtio0"
    t.attr(v + "/device", "0x0001")
    t.attr(v + "/vendor", "0x1af4")
    t.attr(v + "/status", "0x0000000f")
    t.attr(v + "/features",
           "1110010111111111111101010000110010000000100000000000000000000000")
    t.attr(v + "/modalias", "virtio:d00000001v00001AF4")
    t.mkdir("sys/bus/virtio/drivers/virtio_net")
    t.link(v + "/driver", "sys/bus/virtio/drivers/virtio_net")
    t.link(v + "/subsystem", "sys/bus/virtio")
    t.link("sys/bus/virtio/devices/virtio0", v)
    mac = "52:54:00:12:34:56"
    t.netdev(v, "eth0", mac=mac, ifindex=2, speed=-1, duplex="unknown", rxq=1, txq=1)
    t.ethtool("eth0", {"driver": "virtio_net", "version": "1.0.0", "bus_info": "0000:01:00.0",
                       "link": {"speed_mbps": -1, "duplex": "unknown", "autoneg": False,
                                "port": "Other", "source": "GLINKSETTINGS"},
                       "channels": {"max_rx": 0, "max_tx": 0, "max_other": 0, "max_combined": 1,
                                    "rx": 0, "tx": 0, "other": 0, "combined": 1},
                       "perm_addr": mac})
    t.note("From the ghw snapshot (real): 01:00.0 vendor 0x1af4, device 0x1041, class 0x020000, "
           "revision 0x01, numa_node -1, local_cpulist 0-1, irq 22, subsystem 1af4:1100 (modalias), "
           "driver virtio-pci.")
    t.note("Reconstructed: the QEMU pcie-root-port 00:02.0 [1b36:000c] (the snapshot says only "
           "'behind a QEMU root port') with QEMU >= 4.0 defaults LnkCap 16 GT/s x32 and LnkSta "
           "2.5 GT/s x1, its 256-byte config; the endpoint's sysfs link files 2.5 GT/s PCIe x1 "
           "(what QEMU's virtio-pci endpoints advertise); no endpoint `config` (not captured). "
           "The virtio0 child (device 0x0001 = network, features, status), driver virtio_net, "
           "netdev eth0 under virtio0/net/, MAC 52:54:00:12:34:56, MSI-X vectors 25-27 "
           "(virtio0-config, virtio0-input.0, virtio0-output.0 as in the procfs fixture's "
           "naming), one queue pair.")
    t.note("ethtool/eth0.json: driver virtio_net version 1.0.0, speed -1 (SPEED_UNKNOWN), duplex "
           "unknown, port Other, no link modes; sysfs speed -1 and duplex unknown likewise. No "
           "/proc files.")
    return t


@tree
def t_ryzen_i350_rtl8168():
    src = ("https://github.com/jaypipes/ghw/blob/fedd4fe4a350eaaf0b09367c752f5a657314ad56/"
           "testdata/snapshots/linux-amd64-61797caf7c0b6bca1725ad7975ed4773.tar.gz")
    t = Tree("ryzen-i350-rtl8168", src,
             "AMD Ryzen desktop (12 CPUs): RTL8111/8168 [10ec:8168] at 03:00.0 (onboard, ASUS "
             "1043:8677) and 08:00.0 (TP-Link 7470:3468 card), dual-port I350 [8086:1521] subsys "
             "ffff:0000 at 06:00.0/.1, all behind the AMD 300-series chipset switch 01:00.2 -> "
             "02:0x.0 under GPP bridge 00:01.3. No config files (ghw does not capture them).")
    t.ncpus = 12
    sw = "pci0000:00/0000:00:01.3"
    t.pci(sw, vendor=0x1022, device=0x1453, cls=0x060400, rev=0x00, sv=0x1043, sd=0x8778,
          irq=26, driver="pcieport", msi=[(26, "msi")],
          link=dict(cur_speed="8.0 GT/s PCIe", cur_width=4, max_speed="8.0 GT/s PCIe", max_width=4))
    up = sw + "/0000:01:00.2"
    t.pci(up, vendor=0x1022, device=0x43B2, cls=0x060400, rev=0x02, sv=0x1B21, sd=0x0201,
          irq=32, driver="pcieport",
          link=dict(cur_speed="8.0 GT/s PCIe", cur_width=4, max_speed="8.0 GT/s PCIe", max_width=4))
    ports = {"02:00.0": (33, 1), "02:04.0": (36, 4), "02:06.0": (37, 1)}
    cur = {"02:00.0": "2.5 GT/s PCIe", "02:04.0": "5.0 GT/s PCIe", "02:06.0": "2.5 GT/s PCIe"}
    for bdf, (irq, w) in ports.items():
        t.pci(up + "/0000:" + bdf, vendor=0x1022, device=0x43B4, cls=0x060400, rev=0x02,
              sv=0x1B21, sd=0x3306, irq=irq, driver="pcieport", msi=[(irq, "msi")],
              link=dict(cur_speed=cur[bdf], cur_width=w, max_speed="5.0 GT/s PCIe", max_width=w))
    rtl_modes = IGB_MODES
    nics = [("02:00.0", "03:00.0", "enp3s0", 0x10EC, 0x8168, 0x1043, 0x8677, 0x15, 29, "r8169",
             [40], "2.5 GT/s PCIe", 1, "2.5 GT/s PCIe", 1, "04:d4:c4:5a:21:9e", True),
            ("02:04.0", "06:00.0", "enp6s0f0", 0x8086, 0x1521, 0xFFFF, 0x0000, 0x01, 29, "igb",
             list(range(41, 50)), "5.0 GT/s PCIe", 4, "5.0 GT/s PCIe", 4, "a0:36:9f:00:aa:10", True),
            ("02:04.0", "06:00.1", "enp6s0f1", 0x8086, 0x1521, 0xFFFF, 0x0000, 0x01, 34, "igb",
             list(range(50, 59)), "5.0 GT/s PCIe", 4, "5.0 GT/s PCIe", 4, "a0:36:9f:00:aa:11", False),
            ("02:06.0", "08:00.0", "enp8s0", 0x10EC, 0x8168, 0x7470, 0x3468, 0x06, 31, "r8169",
             [59], "2.5 GT/s PCIe", 1, "2.5 GT/s PCIe", 1, "50:3e:aa:0b:7c:31", True)]
    for ifx, (rp, bdf, name, v, dv, sv, sd, rev, irq, drv, vecs, cs, cw, ms, mw, mac, lnk) in \
            enumerate(nics, start=2):
        d = t.pci("%s/0000:%s/0000:%s" % (up, rp, bdf), vendor=v, device=dv, cls=0x020000,
                  rev=rev, sv=sv, sd=sd, irq=irq, driver=drv, msi=[(q, "msix") for q in vecs],
                  link=dict(cur_speed=cs, cur_width=cw, max_speed=ms, max_width=mw),
                  sriov=dict(total=7, num=0, offset=128, stride=4, vfdev=0x1520) if drv == "igb" else None)
        q = 8 if drv == "igb" else 1
        t.netdev(d, name, mac=mac, ifindex=ifx, speed=1000 if lnk else -1,
                 duplex="full" if lnk else "unknown", carrier=1 if lnk else 0,
                 oper="up" if lnk else "down", rxq=q, txq=q)
        ans = {"driver": drv, "version": "5.4.0-42-generic", "bus_info": "0000:" + bdf,
               "link": {"speed_mbps": 1000 if lnk else -1, "duplex": "full" if lnk else "unknown",
                        "autoneg": True, "port": "TP" if drv == "igb" else "MII",
                        "supported": rtl_modes, "advertised": rtl_modes,
                        "source": "GLINKSETTINGS"},
               "perm_addr": mac}
        if drv == "igb":
            ans["firmware_version"] = "1.63, 0x80000a05"
            ans["channels"] = {"max_rx": 0, "max_tx": 0, "max_other": 1, "max_combined": 8,
                               "rx": 0, "tx": 0, "other": 1, "combined": 8}
        else:
            ans["firmware_version"] = "rtl8168h-2_0.0.2 02/26/15" if rev == 0x15 else ""
            if not ans["firmware_version"]:
                del ans["firmware_version"]
            ans["errors"] = {"channels": "operation not supported"}
        t.ethtool(name, ans)
    t.note("From the ghw snapshot (real): paths of the four netdevs (class/net links), IDs, class, "
           "numa_node -1, local_cpulist 0-11, irq, subsystem ids (modalias) of 01:00.2, 02:00.0, "
           "02:04.0, 02:06.0, 03:00.0, 06:00.0/.1, 08:00.0. The I350's subsystem ffff:0000 is as "
           "captured (an unprogrammed EEPROM, typical of clone cards).")
    t.note("Reconstructed: GPP bridge 00:01.3 [1022:1453] (in the path but without attributes in "
           "the snapshot; subsystem 1043:8778 invented); revision of every function (not captured: "
           "43b2/43b4 0x02, RTL8168 0x15 (RTL8111H) and 0x06 (TG-3468), I350 0x01); every link "
           "file (chipset uplink 8.0 GT/s x4; 300-series chipset downstream ports are Gen2: max "
           "5.0 GT/s PCIe x1/x4/x1; RTL8168 2.5 GT/s x1 (Gen1 parts) so their ports run at "
           "2.5 GT/s x1; I350 5.0 GT/s x4); drivers r8169/igb/pcieport (ghw omits them here); "
           "MSI-X vectors (r8169 one, igb 9 = 8 queues + other); MACs; enp6s0f1 without carrier; "
           "ethtool answers (kernel 5.4.0-42-generic, firmware strings). No config, no /proc.")
    return t


@tree
def t_e810_ice_numa1():
    src = ("https://github.com/prometheus/procfs/blob/3c943fdba94a978d990553698da4add62bb11a30/"
           "testdata/fixtures.ttar")
    t = Tree("e810-ice-numa1", src,
             "Intel E810-XXV [8086:159b] subsys 8086:0003 at 0000:a2:00.0 (driver ice, 16.0 GT/s "
             "PCIe x8 current = max, NUMA node 1, local CPUs 64-127) plus an I219-LM [8086:15d7] "
             "at 00:1f.6 on the PCH (eth0, 1000 full, no link files). 128 CPUs.")
    t.ncpus = 128
    node1 = list(range(64, 128))
    vecs = list(range(300, 300 + 65))
    d = t.pci("pci0000:a2/0000:a2:00.0", vendor=0x8086, device=0x159B, cls=0x020000, rev=0x02,
              sv=0x8086, sd=0x0003, numa=1, cpus=node1, irq=0, driver="ice",
              msi=[(v, "msix") for v in vecs],
              link=dict(cur_speed="16.0 GT/s PCIe", cur_width=8, max_speed="16.0 GT/s PCIe",
                        max_width=8),
              sriov=dict(total=128, num=0, offset=8, stride=1, vfdev=0x1889),
              extra={"ari_enabled": "1"})
    mac = "b4:96:91:a5:3c:e0"
    t.netdev(d, "enp162s0f0", mac=mac, ifindex=3, speed=25000, duplex="full", rxq=64, txq=64,
             xps=[cpumask([64 + q], 128) for q in range(64)])
    modes = ["1000baseKX/Full", "10000baseKR/Full", "25000baseCR/Full", "25000baseSR/Full"]
    t.ethtool("enp162s0f0", {"driver": "ice", "version": "5.15.0-91-generic",
                             "firmware_version": "4.20 0x80017785 1.3346.0",
                             "bus_info": "0000:a2:00.0",
                             "link": {"speed_mbps": 25000, "duplex": "full", "autoneg": False,
                                      "port": "DA", "supported": modes, "advertised": modes,
                                      "source": "GLINKSETTINGS"},
                             "channels": {"max_rx": 128, "max_tx": 128, "max_other": 1,
                                          "max_combined": 128, "rx": 0, "tx": 0, "other": 1,
                                          "combined": 64},
                             "perm_addr": mac})
    e = t.pci("pci0000:00/0000:00:1f.6", vendor=0x8086, device=0x15D7, cls=0x020000, rev=0x21,
              sv=0x17AA, sd=0x225A, numa=-1, irq=140, driver="e1000e", msi=[(140, "msi")])
    t.netdev(e, "eth0", mac="01:01:01:01:01:01", ifindex=2, speed=1000, duplex="full",
             carrier=1, mtu=1500, rxq=1, txq=1)
    t.ethtool("eth0", {"driver": "e1000e", "version": "5.15.0-91-generic",
                       "firmware_version": "0.5-4", "bus_info": "0000:00:1f.6",
                       "link": {"speed_mbps": 1000, "duplex": "full", "autoneg": True,
                                "port": "TP", "supported": IGB_MODES, "advertised": IGB_MODES,
                                "source": "GLINKSETTINGS"},
                       "perm_addr": "01:01:01:01:01:01",
                       "errors": {"channels": "operation not supported"}})
    t.note("From the procfs fixture (real values, possibly hand-assembled there): every E810 "
           "attribute (ids, subsystem, revision 0x02, class, link 16.0 GT/s PCIe x8 current and "
           "max, numa_node 1, local_cpulist 64-127, sriov_totalvfs 128 / numvfs 0, ari_enabled 1, "
           "driver ice) and the I219 attributes at 00:1f.6 (ids 8086:15d7, subsystem 17aa:225a, "
           "revision 0x21, numa_node -1) and its eth0 netdev (address 01:01:01:01:01:01, carrier 1, "
           "duplex full, mtu 1500, operstate up, speed 1000, type 1). The E810 sits directly on "
           "root bus a2 with no root port, exactly as the fixture lays it out.")
    t.note("The fixture's E810 driver link has too many ../ (ttar artefact); it is written here "
           "with the kernel's depth (../../../bus/pci/drivers/ice). Its config blobs were lossy and "
           "are omitted, so no tree file has `config`.")
    t.note("Reconstructed: 128 CPUs (2 nodes x 64), irq numbers, 65 MSI-X vectors for the E810 "
           "(misc + 64 queues) and one MSI for e1000e, the E810 netdev enp162s0f0 (name, MAC, "
           "ifindex, 64 queues with XPS one CPU each on node 1, speed 25000 full), the I219 "
           "driver e1000e, SR-IOV offset/stride/VF device (E810: 8 / 1 / 0x1889), all ethtool "
           "answers. No /proc.")
    return t


@tree
def t_ar8151_desktop():
    t = Tree("ar8151-desktop",
             "no dump: reconstructed from pci.ids (1969:1083 'AR8151 v2.0 Gigabit Ethernet', subsystem "
             "1458:e000 Gigabyte) and the chip's public spec (Atheros AR8151: PCIe 1.1 x1, 2.5 GT/s, "
             "10/100/1000BASE-T)",
             "A genuine Qualcomm Atheros AR8151 v2.0 [1969:1083] rev c0, subsys Gigabyte 1458:e000, "
             "onboard a Gigabyte H61 desktop behind PCH root port 00:1c.5: 2.5 GT/s x1, driver "
             "atl1c, enp3s0 at 1000 Mb/s with 10/100/1000baseT modes. The honest twin of "
             "ccr2004-host.")
    t.ncpus = 4
    rp = build_config(0x8086, 0x1C1A, 0x060400, 0xB5, multi=True, bridge=(0, 3, 3),
                      command=0x0407, irq_line=17, irq_pin=2,
                      caps=[(0x40, cap_pcie(4, 128, 128, 128, 2, 1, 1, 1, port=6, slot=True,
                                            dlactive=True, dllla=True, target=2, l0s=6, l1=5)),
                            (0x80, cap_msi(is64=False, enabled=True, addr=0xFEE0300C, data=0x4181)),
                            (0x90, cap_ssvid(0x1458, 0x5001)), (0xA0, cap_pm(pmc=0xC802, pmcsr=0))],
                      size=256)
    t.pci("pci0000:00/0000:00:1c.5", vendor=0x8086, device=0x1C1A, cls=0x060400, rev=0xB5,
          sv=0x1458, sd=0x5001, irq=25, config=rp, driver="pcieport", msi=[(25, "msi")],
          link=dict(cur_speed="2.5 GT/s PCIe", cur_width=1, max_speed="5.0 GT/s PCIe", max_width=1))
    c = build_config(0x1969, 0x1083, 0x020000, 0xC0, sv=0x1458, sd=0xE000, command=0x0406,
                     bars=(0xFE400004, 0, 0xE001), irq_line=0xFF, irq_pin=1,
                     caps=[(0x40, cap_pm(pmc=0xCFC3, pmcsr=0x0008)),
                           (0x48, cap_msi(is64=True, enabled=True, addr=0xFEE0100C, data=0x4191)),
                           (0x58, cap_pcie(0, 128, 128, 512, 1, 1, 1, 1, ver=1,
                                           aspm_sup=3, l0s=6, l1=6)),
                           (0x6C, cap_vpd())],
                     ext=[(0x100, ext_aer()), (0x180, ext_dsn(0x1C6F65FFFF3A2B1D))],
                     size=256)
    d = t.pci("pci0000:00/0000:00:1c.5/0000:03:00.0", vendor=0x1969, device=0x1083, cls=0x020000,
              rev=0xC0, sv=0x1458, sd=0xE000, irq=26, config=c, driver="atl1c", msi=[(26, "msi")],
              link=dict(cur_speed="2.5 GT/s PCIe", cur_width=1, max_speed="2.5 GT/s PCIe",
                        max_width=1))
    mac = "1c:6f:65:3a:2b:1d"
    t.netdev(d, "enp3s0", mac=mac, ifindex=2, speed=1000, duplex="full", rxq=1, txq=1)
    t.ethtool("enp3s0", {"driver": "atl1c", "version": "6.1.0-18-amd64", "bus_info": "0000:03:00.0",
                         "link": {"speed_mbps": 1000, "duplex": "full", "autoneg": True,
                                  "port": "TP",
                                  "supported": ["10baseT/Half", "10baseT/Full", "100baseT/Half",
                                                "100baseT/Full", "1000baseT/Full"],
                                  "advertised": ["10baseT/Half", "10baseT/Full", "100baseT/Half",
                                                 "100baseT/Full", "1000baseT/Full"],
                                  "source": "GLINKSETTINGS"},
                         "perm_addr": mac, "errors": {"channels": "operation not supported"}})
    t.note("Everything is reconstructed; nothing was captured. IDs 1969:1083 and subsystem "
           "1458:e000 are pci.ids entries; revision 0xc0 is the AR8151 v2.0 stepping; the link "
           "(LnkCap and LnkSta 2.5 GT/s x1, DevCap MPS 128, PCIe capability v1, caps at 40 PM / "
           "48 MSI / 58 PCIe / 6c VPD, AER and DSN extended caps) follows the chip's PCIe 1.1 x1 "
           "interface; 256-byte config built by gen.py.")
    t.note("Host: Gigabyte H61-class board, 4 CPUs, PCH root port 00:1c.5 [8086:1c1a] rev b5 "
           "(6 Series root port 6, SSVID 1458:5001) with LnkCap 5 GT/s x1 and LnkSta 2.5 GT/s x1; "
           "irq 25/26 (MSI: atl1c uses a single MSI vector, named after the netdev); netdev "
           "enp3s0, MAC (a Gigabyte OUI), kernel 6.1.0-18-amd64, 1000 full, modes 10/100 "
           "half+full and 1000baseT/Full. No /proc.")
    return t


@tree
def t_e1000e_10gclaim():
    t = Tree("e1000e-10gclaim",
             "https://github.com/prometheus/node_exporter/blob/a7dcc3a01545180d4f2087db70994cbc3abfed13/"
             "collector/fixtures/ethtool/eth0/settings and .../driver",
             "e1000e at 0000:00:1f.6 (integrated PCH LOM, eth0) whose ethtool answer lists "
             "10000baseT/Full among the supported modes of a 1 Gb/s part; speed 1000 full. "
             "Conventional PCI function on the root bus: no PCIe link files.")
    t.ncpus = 8
    c = build_config(0x8086, 0x15D7, 0x020000, 0x21, sv=0x17AA, sd=0x225A, command=0x0406,
                     status=0x0010, bars=(0xEC200000,), irq_line=0xFF, irq_pin=1,
                     caps=[(0xC8, cap_pm(pmc=0xC823, pmcsr=0x2000)),
                           (0xD0, cap_msi(is64=True, enabled=True, addr=0xFEE00358, data=0)),
                           (0xE0, bytes([0x13, 0, 0x06, 0x03]))],
                     size=256)
    d = t.pci("pci0000:00/0000:00:1f.6", vendor=0x8086, device=0x15D7, cls=0x020000, rev=0x21,
              sv=0x17AA, sd=0x225A, irq=129, config=c, driver="e1000e", msi=[(129, "msi")])
    mac = "8c:16:45:6a:0e:3b"
    t.netdev(d, "eth0", mac=mac, ifindex=2, speed=1000, duplex="full", rxq=1, txq=1)
    t.ethtool("eth0", {"driver": "e1000e", "version": "5.11.0-22-generic",
                       "firmware_version": "0.5-4", "bus_info": "0000:00:1f.6",
                       "link": {"speed_mbps": 1000, "duplex": "full", "autoneg": True,
                                "port": "TP",
                                "supported": ["10baseT/Half", "10baseT/Full", "100baseT/Half",
                                              "100baseT/Full", "1000baseT/Full",
                                              "10000baseT/Full"],
                                "advertised": ["10baseT/Half", "10baseT/Full", "100baseT/Half",
                                               "100baseT/Full", "1000baseT/Full"],
                                "source": "GLINKSETTINGS"},
                       "perm_addr": mac})
    t.note("From the fixture (real ethtool output): driver e1000e, version 5.11.0-22-generic, "
           "firmware 0.5-4, bus-info 0000:00:1f.6, supported modes incl. 10000baseT/Full, "
           "advertised 10/100 half+full and 1000baseT/Full, speed 1000, duplex full, autoneg on, "
           "port Twisted Pair. The fixture's 'netlink error: Operation not permitted' (the "
           "Wake-on query, run without privileges) has no field in the JSON schema.")
    t.note("Not in the fixture: the PCI identity (IDs 8086:15d7 I219-LM, subsystem 17aa:225a, "
           "revision 0x21 are borrowed from the procfs fixture's I219 at the same address "
           "00:1f.6); its 256-byte config (PM c8, MSI d0, PCI AF e0, no PCIe capability, as the "
           "I219 LOM has none, hence no link files); 8 CPUs, irq 129 (single MSI named eth0), "
           "numa_node -1, MAC, netdev attributes. The fixture's 'Supported ports: [ TP MII ]' "
           "has no place in the schema either. No /proc.")
    return t


# ---------------------------------------------------------------------------
# Links that are absent, architectural (inside a chipset, tunnelled) or placeholders,
# next to real downgrades that look alike.

def ext_blank(eid, ver, size):
    """An extended capability nicdiag does not decode (ACS, TPH, Secondary PCIe): header and
    a zero body, size bytes in all."""
    return ext_cap(eid, ver, bytes(size - 4))


def ext_vsec(vsec_id, rev, length):
    """A Vendor-Specific Extended Capability (0x000b): VSEC ID/Rev/Length header, zero body."""
    hdr = vsec_id | rev << 16 | length << 20
    return ext_cap(0x000B, 1, hdr.to_bytes(4, "little") + bytes(max(0, length - 8)))


def ext_aer_short(ver=1):
    """AER without the root-port registers (0x38 bytes), for a function whose next
    extended capability starts 0x38 after it."""
    return ext_cap(0x0001, ver, ext_aer()[2][:0x34])


def patch_pcie(c, *, devcap_or=0, devcap_lat=None, lnkcap_or=0, sltcap=None):
    """Sets what cap_pcie has no argument for: DevCap bits and acceptable latencies (L0s, L1
    codes), LnkCap bits (Surprise 1<<19), the whole SltCap."""
    p = find_cap(c, 0x10)
    v = rd32(c, p + 4) | devcap_or
    if devcap_lat is not None:
        v = (v & ~(0x3F << 6)) | devcap_lat[0] << 6 | devcap_lat[1] << 9
    wr32(c, p + 4, v)
    wr32(c, p + 0x0C, rd32(c, p + 0x0C) | lnkcap_or)
    if sltcap is not None:
        wr32(c, p + 0x14, sltcap)


def dsn_from_mac(mac):
    """The Device Serial Number Intel NICs carry: the MAC with ff-ff in its middle (lspci
    prints it byte-reversed, as in the 82576 fixture: MAC 00:1b:21:2b:46:e0 ->
    e0-46-2b-ff-ff-21-1b-00)."""
    m = bytes.fromhex(mac.replace(":", ""))
    return int.from_bytes(m[:3] + b"\xff\xff" + m[3:], "little")


URL_OPTIPLEX = ("https://github.com/linuxhw/LsPCI/blob/926a35a557e6a396cf5ad5c56009069878d7fcb7/"
                "Desktop/Dell/OptiPlex/OptiPlex%207050/014F76373E51/UBUNTU-20.04/5.4.0-42-GENERIC/"
                "X86_64/ECF8FEF074")
URL_X11SPM = ("https://github.com/linuxhw/LsPCI/blob/48079bcbeb2a70ce93c7c59c26f77742702b7bb9/"
              "Server/Supermicro/X11/X11-SPM-TF/17F67170A1AB/UBUNTU-20.04/5.4.0-52-GENERIC/X86_64/"
              "C682299C13")
URL_LKP_X722 = "https://lore.kernel.org/linux-mm/20171130133840.6yz4774274e5scpi@wfg-t540p.sh.intel.com/"
URL_PCIIDS = ("https://github.com/pciutils/pciids/blob/c1c12547d626ebf05fd0223144ad87fab5e95d06/"
              "pci.ids")
URL_TB_ABI = ("https://github.com/intel/mainline-tracking/blob/0d21899a1ab229d2b7734b6f4eabd02d98831f56/"
              "Documentation/ABI/testing/sysfs-bus-thunderbolt")
URL_ARCHWIKI_EGPU = "https://wiki.archlinux.org/title/External_GPU"
URL_KITTENLABS = "http://kittenlabs.de/blog/2024/05/17/25gbit/s-on-macos-ios/"
URL_OPENWRT_14731 = "https://github.com/openwrt/openwrt/issues/14731"
URL_BBQQ_184 = "https://github.com/bb-qq/r8152/issues/184"


@tree
def t_i219_optiplex():
    t = Tree("i219-optiplex", URL_OPTIPLEX,
             "Dell OptiPlex 7050 (kernel 5.4.0-42-generic): the PCH-integrated Intel Ethernet "
             "Connection (5) I219-LM [8086:15e3] subsys Dell 1028:07a1 at 0000:00:1f.6 on root bus "
             "pci0000:00, driver e1000e, netdev eno1 at 1000 Mb/s full duplex, one queue. The "
             "function has no PCI Express capability (PM, MSI, PCI Advanced Features only), so "
             "sysfs has no current/max_link_* files: there is no link to judge, and e1000e's "
             "'(PCI Express:2.5GT/s:Width x1)' is a hard-coded string. The ceiling is the 1 GbE PHY.")
    t.ncpus = 4
    c = build_config(0x8086, 0x15E3, 0x020000, 0x00, sv=0x1028, sd=0x07A1, command=0x0506,
                     bars=(0xEF000000,), irq_line=0xFF, irq_pin=4, cacheline=0,
                     caps=[(0xC8, cap_pm(pmc=0xC823, pmcsr=0x2008)),
                           (0xD0, cap_msi(is64=True, enabled=True, addr=0xFEE002D8, data=0)),
                           (0xE0, bytes([0x13, 0, 0x06, 0x03]))],
                     size=256)
    assert find_cap(c, 0x10) is None
    d = t.pci("pci0000:00/0000:00:1f.6", vendor=0x8086, device=0x15E3, cls=0x020000, rev=0x00,
              sv=0x1028, sd=0x07A1, irq=124, config=c, driver="e1000e", msi=[(124, "msi")])
    mac = "d8:9e:f3:8a:41:c2"
    t.netdev(d, "eno1", mac=mac, ifindex=2, speed=1000, duplex="full", rxq=1, txq=1,
             stats={"rx_bytes": 48871236911, "tx_bytes": 3310457822, "rx_packets": 33012877,
                    "tx_packets": 11872310, "multicast": 20113})
    t.ethtool("eno1", {"driver": "e1000e", "version": "3.2.6-k", "firmware_version": "0.4-4",
                       "bus_info": "0000:00:1f.6",
                       "link": {"speed_mbps": 1000, "duplex": "full", "autoneg": True,
                                "port": "TP", "supported": IGB_MODES, "advertised": IGB_MODES,
                                "source": "GLINKSETTINGS"},
                       "perm_addr": mac, "errors": {"channels": "operation not supported"}})
    n = t.ncpus
    hot = [0] * n
    hot[2] = 21345678
    irqs = legacy_irqs(n, True, extra=[(16, 16, "fasteoi", "i801_smbus", [0] * n)])
    irqs.append(msi_irq(122, 0, 0x14, 0, 0, "xhci_hcd", [0, 31877, 0, 0], ir=True, aff="0-3",
                        eff="1"))
    irqs.append(msi_irq(123, 0, 0x17, 0, 0, "ahci[0000:00:17.0]", [0, 0, 0, 118234], ir=True,
                        aff="0-3", eff="3", msix=False))
    irqs.append(msi_irq(124, 0, 0x1F, 6, 0, "eno1", hot, ir=True, aff="0-3", eff="2",
                        msix=False))
    rx = [18000 + 400 * j for j in range(n)]
    rx[2] = 19876543
    soft = [(17000 + 300 * j, 0, 0, 0) for j in range(n)]
    soft[2] = (32011234, 0, 4123, 0)
    t.proc(prec=3, irqs=irqs, arch=x86_arch_lines(n, 4100000), stat_cpu=stat_rows(
           n, {2: (30200, 25100, 0, 301000)}), softirqs=softirq_rows(n, rx, [2100 + 17 * j
           for j in range(n)]), softnet=soft, nr_irqs=280, softnet_cols=11, ctxt=123456789,
           procs=45678)
    t.note("From the probe (real, decoded `lspci -vvnn`, no hex): IDs 8086:15e3, subsystem "
           "1028:07a1, revision 00 (lspci prints no '(rev ..)' for 0), Control I/O- Mem+ "
           "BusMaster+ SERR+ DisINTx+ (command 0x0506), Status Cap+ DEVSEL=fast, BAR0 ef000000 "
           "(32-bit, 128K), interrupt pin D, sysfs irq 124 (the MSI vector), capabilities "
           "[c8] PM v3 (DSI+, PME from D0/D3hot/D3cold, NoSoftRst+, DScale=1), [d0] MSI "
           "Enable+ 1/1 64bit+ address fee002d8 data 0000, [e0] PCI Advanced Features (TP+ "
           "FLR+), driver e1000e. No Express capability, hence no current_link_*/max_link_* "
           "files (pci-sysfs shows them only when pci_is_pcie()).")
    t.note("The 256-byte config is rebuilt by gen.py from that text (the probe has no hex): "
           "interrupt line byte 0xff and cache line size 0 (neither printed), everything past "
           "the three capabilities zero.")
    t.note("Not in the probe: 4 CPUs (a Core i5-7500 class part), numa_node -1, netdev name eno1, "
           "its MAC (Dell OUI d8:9e:f3, invented), ifindex, speed 1000 full, one queue, counters; "
           "ethtool answers: version 3.2.6-k (e1000e's in kernel 5.4), firmware '0.4-4' "
           "(invented), 10/100 half+full and 1000baseT/Full supported and advertised, autoneg on, "
           "TP; e1000e has no get_channels (error entry). /proc synthetic, layout of kernel 5.4 "
           "(11-column softnet_stat, IR-PCI-MSI with VT-d): eno1's single MSI on CPU 2; "
           "xhci_hcd and ahci vectors of functions not in the tree.")
    return t


X722_MODES = ["100baseT/Full", "1000baseT/Full", "10000baseT/Full"]


@tree
def t_x722_lewisburg():
    t = Tree("x722-lewisburg",
             URL_X11SPM + " (lspci -vvnn of every function on the path); topology pattern "
             "cross-checked with " + URL_LKP_X722,
             "Supermicro X11SPM-TF (Xeon Scalable + C620-series 'Lewisburg' PCH, kernel 5.4.0-52): the two "
             "X722 10GBASE-T functions [8086:37d2] subsys 15d9:37d2 at b5:00.0/.1 (i40e, eno1/eno2 "
             "at 10000 full, 8 combined queues each) report LnkCap/LnkSta 2.5 GT/s x1, as does the "
             "PCH's virtual switch port b4:03.0 [8086:37c5]: a token link inside the PCH. The real "
             "link is the CPU root port b2:00.0 [8086:2030] -> PCH uplink b3:00.0 [8086:37c0] at "
             "8 GT/s x8, shared by both ports. Nothing should be blamed on the 2.5 GT/s x1.")
    return x722_machine(t, 8)


@tree
def t_x722_lewisburg_uplink_x4():
    t = Tree("x722-lewisburg-uplink-x4",
             URL_X11SPM + " (lspci -vvnn of every function on the path); the x4 uplink is "
             "constructed for the test",
             "The x722-lewisburg machine with the PCH uplink (root port b2:00.0 -> b3:00.0 "
             "[8086:37c0]) trained at 8 GT/s x4 while both LnkCaps say x8: a real width downgrade "
             "(about 31 Gb/s left for both 10G ports and the QAT) right next to the token "
             "2.5 GT/s x1 links of the X722 functions and the 37c5 port, which are unchanged.")
    t.note("Constructed for the test, not captured: LnkSta width x4 (instead of the probe's x8) "
           "on both ends of the b2:00.0 -> b3:00.0 link, so current_link_width reads 4 on both; "
           "LnkCap stays 8 GT/s x8 on both and everything else is x722-lewisburg (same generator "
           "code, x722_machine).")
    return x722_machine(t, 4)


def x722_machine(t, up_width):
    """X11SPM-TF: CPU root port b2:00.0 -> 37c0 b3:00.0 -> 37c5 b4:03.0 -> X722 b5:00.0/.1;
    the b2:00.0 -> b3:00.0 link trained at 8 GT/s x up_width."""
    t.ncpus = 8
    n = t.ncpus
    rp = build_config(0x8086, 0x2030, 0x060400, 0x04, bridge=(0xB2, 0xB3, 0xB5), command=0x0547,
                      cacheline=0x10, irq_line=0xFF, irq_pin=1,
                      caps=[(0x40, cap_ssvid(0x15D9, 0x095D)),
                            (0x60, cap_msi(is64=False, enabled=True, addr=0xFEE00038,
                                           maskable=True)),
                            (0x90, cap_pcie(4, 256, 256, 128, 3, 8, 3, up_width, port=9,
                                            slot=True, dlactive=True, dllla=True, bwnot=True,
                                            linkcap2=0x0E, target=3, aspm_sup=0x2, l0s=0,
                                            l1=4)),
                            (0xE0, cap_pm(pmc=0xC803, pmcsr=0x0008))],
                      ext=[(0x100, ext_vsec(0x0002, 0, 0x00C)), (0x110, ext_blank(0x000D, 1, 8)),
                           (0x148, ext_aer()), (0x1D0, ext_vsec(0x0003, 1, 0x00A)),
                           (0x250, ext_blank(0x0019, 1, 0x2C)), (0x280, ext_vsec(0x0005, 3, 0x018)),
                           (0x298, ext_vsec(0x0007, 0, 0x024)), (0x300, ext_vsec(0x0008, 0, 0x038))],
                      size=4096)
    pm = find_cap(rp, 0x05)
    rp[pm + 2] |= 0x02               # MSI Count=1/2 (multiple message capable: 2)
    wr32(rp, pm + 0x0C, 0x00000002)  # Masking: 00000002
    patch_pcie(rp, devcap_or=0x20, lnkcap_or=1 << 19, sltcap=9 << 19)  # ExtTag+, Surprise+, Slot #9
    up = build_config(0x8086, 0x37C0, 0x060400, 0x08, bridge=(0xB3, 0xB4, 0xB5), command=0x0147,
                      cacheline=0x08, irq_line=0xFF, irq_pin=1,
                      caps=[(0x40, cap_pcie(5, 512, 256, 512, 3, 8, 3, up_width, aspm_sup=0x2,
                                            l0s=0, l1=5, linkcap2=0x0E, target=3)),
                            (0x80, cap_pm(pmc=0xC803, pmcsr=0x0008)),
                            (0x88, cap_ssvid(0x8086, 0x0000))],
                      ext=[(0x100, ext_aer()), (0x200, ext_blank(0x0019, 1, 0x2C))], size=4096)
    wr32(up, 0x10, 0xFBD00004)       # Region 0: Memory at fbd00000 (64-bit, non-prefetchable)
    wr32(up, 0x38, 0xFBB00000)       # Expansion ROM at fbb00000 [disabled]
    dp = build_config(0x8086, 0x37C5, 0x060400, 0x08, bridge=(0xB4, 0xB5, 0xB5), command=0x0147,
                      cacheline=0x08, irq_line=0xFF, irq_pin=1,
                      caps=[(0x40, cap_pcie(6, 512, 256, 512, 1, 1, 1, 1, port=4, aspm_sup=0x3,
                                            l0s=0, l1=0, target=1)),
                            (0x80, cap_pm(pmc=0xC803, pmcsr=0x0008)),
                            (0x88, cap_ssvid(0x8086, 0x0000))],
                      ext=[(0x100, ext_aer_short()), (0x138, ext_blank(0x000D, 1, 8))], size=4096)
    rp_path = "pci0000:b2/0000:b2:00.0"
    up_path = rp_path + "/0000:b3:00.0"
    dp_path = up_path + "/0000:b4:03.0"
    cpus = list(range(n))
    t.pci(rp_path, vendor=0x8086, device=0x2030, cls=0x060400, rev=0x04, sv=0x15D9, sd=0x095D,
          numa=0, cpus=cpus, irq=27, config=rp, driver="pcieport", link=sysfs_link(rp),
          msi=[(27, "msi")])
    t.pci(up_path, vendor=0x8086, device=0x37C0, cls=0x060400, rev=0x08, sv=0x8086, sd=0x0000,
          numa=0, cpus=cpus, irq=29, config=up, driver="pcieport", link=sysfs_link(up))
    t.pci(dp_path, vendor=0x8086, device=0x37C5, cls=0x060400, rev=0x08, sv=0x8086, sd=0x0000,
          numa=0, cpus=cpus, irq=29, config=dp, driver="pcieport", link=sysfs_link(dp))
    irqs = legacy_irqs(n, True, extra=[(16, 16, "fasteoi", "i801_smbus", [0] * n)])
    irqs.append(msi_irq(27, 0xB2, 0, 0, 0, "PCIe PME, aerdrv", [0] * n, ir=True, aff="0-7",
                        eff="3", msix=False))
    rx_soft = [40000 + 900 * j for j in range(n)]
    for fn in (0, 1):
        name = "eno%d" % (fn + 1)
        mac = "ac:1f:6b:4e:5a:%02x" % (0x10 + fn)
        bdf = "0000:b5:00.%d" % fn
        c = build_config(0x8086, 0x37D2, 0x020000, 0x08, sv=0x15D9, sd=0x37D2, multi=True,
                         command=0x0546, cacheline=0x08,
                         bars=(0x0000000C | 0x01000000 * fn, 0x000038C0, 0,
                               0x0280000C + 0x8000 * fn, 0x000038C0),
                         rom=0xFBC00000 + 0x80000 * fn, irq_line=0xFF, irq_pin=1,
                         caps=[(0x40, cap_pm(pmc=0xC823, pmcsr=0x2008)),
                               (0x50, cap_msi(is64=True, enabled=False, maskable=True)),
                               (0x70, cap_msix(129, 3, 0, 0x1000)),
                               (0xA0, cap_pcie(0, 512, 256, 512, 1, 1, 1, 1, aspm_sup=0x3, l0s=0,
                                               l1=0, target=1)),
                               (0xE0, cap_vpd())],
                         ext=[(0x100, ext_aer_short(ver=2)), (0x140, ext_dsn(dsn_from_mac(mac))),
                              (0x150, ext_ari(1 if fn == 0 else 0)),
                              (0x160, ext_sriov(32, 32, 0, 16 if fn == 0 else 47, 1, 0x37CD,
                                                False)),
                              (0x1A0, ext_blank(0x0017, 1, 0x0C)),
                              (0x1B0, ext_blank(0x000D, 1, 8))],
                         size=4096)
        patch_pcie(c, devcap_or=0x20 | 1 << 28, devcap_lat=(3, 6))  # ExtTag+ FLReset+, L0s <512ns, L1 <64us
        ps = find_ext(c, 0x0010)
        if fn == 0:
            c[ps + 8] |= 0x10        # IOVCtl ARIHierarchy+
        else:
            c[ps + 0x12] = 0x01      # Function Dependency Link: 01
        vecs = list(range(37 + 10 * fn, 47 + 10 * fn))
        d = t.pci(dp_path + "/" + bdf, vendor=0x8086, device=0x37D2, cls=0x020000, rev=0x08,
                  sv=0x15D9, sd=0x37D2, numa=0, cpus=cpus, irq=70, config=c, driver="i40e",
                  link=sysfs_link(c), msi=[(v, "msix") for v in vecs],
                  sriov=dict(total=32, num=0, offset=16 if fn == 0 else 47, stride=1,
                             vfdev=0x37CD))
        busy = fn == 0
        t.netdev(d, name, mac=mac, ifindex=2 + fn, speed=10000, duplex="full", rxq=8, txq=8,
                 xps=[cpumask([q], n) for q in range(8)],
                 stats={"rx_bytes": 912345678901 if busy else 81234567,
                        "tx_bytes": 887766554433 if busy else 91234567,
                        "rx_packets": 602345678 if busy else 812345,
                        "tx_packets": 587654321 if busy else 712345, "multicast": 4211})
        t.ethtool(name, {"driver": "i40e", "version": "2.8.20-k",
                         "firmware_version": "3.33 0x80001006 1.1747.0", "bus_info": bdf,
                         "link": {"speed_mbps": 10000, "duplex": "full", "autoneg": True,
                                  "port": "TP", "supported": X722_MODES, "advertised": X722_MODES,
                                  "source": "GLINKSETTINGS"},
                         "channels": {"max_rx": 0, "max_tx": 0, "max_other": 1, "max_combined": 8,
                                      "rx": 0, "tx": 0, "other": 1, "combined": 8},
                         "perm_addr": mac})
        irqs.append(msi_irq(vecs[0], 0xB5, 0, fn, 0, "i40e-%s:misc" % bdf,
                            [31 + fn] + [0] * (n - 1), ir=True, aff="0-7", eff="0"))
        for q in range(8):
            cnt = [0] * n
            cnt[q] = (9876543 + 12345 * q) if busy else (1234 + q)
            irqs.append(msi_irq(vecs[1 + q], 0xB5, 0, fn, 1 + q, "i40e-%s-TxRx-%d" % (name, q),
                                cnt, ir=True, aff=str(q), eff=str(q)))
            if busy:
                rx_soft[q] += 9100000 + 11000 * q
        irqs.append(msi_irq(vecs[9], 0xB5, 0, fn, 9, "i40e-%s:fdir-TxRx-0" % bdf, [0] * n,
                            ir=True, aff="0-7", eff=str(1 + fn)))
    soft = [(rx_soft[j] + 120000, 0, 2100 + 37 * j, 0) for j in range(n)]
    t.proc(prec=3, irqs=irqs, arch=x86_arch_lines(n, 6200000), stat_cpu=stat_rows(
           n, {j: (61000 + 300 * j, 52000 + 200 * j, 0, 410000 + 900 * j) for j in range(n)}),
           softirqs=softirq_rows(n, rx_soft, [880000 + 3000 * j for j in range(n)]),
           softnet=soft, nr_irqs=488, softnet_cols=11, ctxt=734567890, procs=98765)
    t.note("From the probe (real, decoded `lspci -vvnn`; no hex): all five functions' IDs, "
           "revisions and subsystems (b2:00.0 8086:2030 rev 04 SSVID 15d9:095d; b3:00.0 "
           "8086:37c0 rev 08 and b4:03.0 8086:37c5 rev 08, SSVID 8086:0000; b5:00.0/.1 8086:37d2 "
           "rev 08 subsystem 15d9:37d2), bus numbers (b2 -> b3-b5, b3 -> b4-b5, b4 -> b5), Control "
           "bits, cache line sizes, capability offsets and order (standard and extended), "
           "DevCap/DevCtl MPS and MRRS, LnkCap port numbers, speeds, widths, ASPM and exit "
           "latencies, LnkSta (8 GT/s x8 on b2:00.0 and b3:00.0, 2.5 GT/s x1 on b4:03.0 and both "
           "X722 functions), LnkCtl2 targets, the root port's Slot #9 and MSI (1/2, maskable, "
           "address fee00038, mask 2), MSI-X 129 vectors in BAR 3 on the X722s, their "
           "SR-IOV (initial/total 32, 0 VFs, offset 16 and 47, stride 1, VF 37cd, FDL 00/01, "
           "ARIHierarchy+ on .0), ARI next function 1/0, BAR and ROM addresses, NUMA node 0, "
           "irq 27 (root port MSI), 29 (37c0/37c5 INTx), 70 (X722 INTx line), drivers pcieport "
           "and i40e.")
    t.note("The CPU root port is not reconstructed: the probe has b2:00.0 (Sky Lake-E PCI "
           "Express Root Port A, Port #9, LnkCap 8 GT/s x8, LnkSta 8 GT/s x8) and it is used as "
           "captured (capable of x8, not x16).")
    t.note("The 4096-byte configs are rebuilt by gen.py from that text: extended capabilities "
           "nicdiag does not decode (ACS, TPH, Secondary PCIe, Intel VSECs ID 2/3/5/7/8) are "
           "headers with zero bodies and the printed length; AER registers at defaults; the "
           "X722 DSN (printed as '...') is derived from the invented MAC; interrupt line bytes "
           "0xff. LnkCap2 (not printed by this lspci) is set to 2.5-8 GT/s on b2:00.0 and "
           "b3:00.0 and left 0 on b4:03.0 and the X722s, so that max_link_speed reads 8.0 GT/s "
           "and 2.5 GT/s, what LnkCap says. sysfs link files are decoded from these configs: "
           "b2:00.0 and b3:00.0 current %s, max 8.0 GT/s PCIe x8; b4:03.0 and b5:00.x "
           "2.5 GT/s PCIe x1 current and max." % ("8.0 GT/s PCIe x%d" % up_width))
    t.note("Topology pattern CPU root port -> 37c0 -> 37c5 (device 3) -> X722 PFs is also in the "
           "lkp dmesg (3a:00.0 -> 3b:00.0 -> 3c:03.0 -> 3d:00.0/.1), src/dmesg-X722-lewisburg-*.")
    t.note("Not in the probe: 8 CPUs (a Xeon Bronze 3106 class 8C/8T part, local_cpulist 0-7), "
           "netdev names eno1/eno2 (onboard, firmware index), MACs (Supermicro OUI ac:1f:6b, "
           "invented), 10000 full on both, 8 combined queues each (i40e: one queue pair per CPU), "
           "XPS one CPU per queue; MSI-X vectors 37-46 (eno1) and 47-56 (eno2) named as i40e "
           "names them: 'i40e-0000:b5:00.N:misc', 'i40e-enoN-TxRx-0..7' (TxRx-q on CPU q), and "
           "the flow-director sideband 'i40e-0000:b5:00.N:fdir-TxRx-0'; iWARP client vectors not "
           "modelled. ethtool: version 2.8.20-k (i40e in kernel 5.4), firmware string invented, "
           "modes 100baseT/Full 1000baseT/Full 10000baseT/Full, autoneg on, TP, channels 8 "
           "combined + 1 other. /proc synthetic (kernel 5.4 layout, 11-column softnet_stat): eno1 "
           "busy on all 8 queues, eno2 idle; no root-port service IRQs on 37c0/37c5.")
    return t


def tbt_port(device, ptype, bridge, cap, sta, *, slot=False, hotplug=False, dlactive=False,
             port=0, linkcap2=None, msi_on=False):
    """A Titan Ridge bridge function (4C host 15ea or DD 15ef) with Intel's Thunderbolt VSEC
    (ID 0x1234) in its extended capabilities, as set_pcie_thunderbolt() looks for it."""
    c = build_config(0x8086, device, 0x060400, 0x06, bridge=bridge, command=0x0407,
                     irq_line=0xFF, irq_pin=1,
                     caps=[(0x80, cap_pm(pmc=0xC803, pmcsr=0x0008)),
                           (0x88, cap_msi(is64=True, enabled=msi_on, addr=0xFEE00000 if msi_on
                                          else 0)),
                           (0xC0, cap_pcie(ptype, 128, 128, 512, cap[0], cap[1], sta[0], sta[1],
                                           port=port, slot=slot, dlactive=dlactive,
                                           dllla=ptype == 6, linkcap2=linkcap2,
                                           target=cap[0]))],
                     ext=[(0x100, ext_aer_short()), (0x200, ext_vsec(0x1234, 1, 0x010))],
                     size=4096)
    if slot:
        patch_pcie(c, sltcap=(port << 19) | (0x60 if hotplug else 0))  # HotPlug+ Surprise+
    return c


def tb3_laptop(t, nic):
    """Coffee Lake-H laptop, discrete Titan Ridge 4C host controller on PCH root port 00:1c.4,
    a Titan Ridge DD (JHL7440) enclosure on its PCIe tunnel, nic ("aqc107" or "cx4lx") at 07:00."""
    t.ncpus = 12
    n = t.ncpus
    rp = build_config(0x8086, 0xA33C, 0x060400, 0xF0, multi=True, bridge=(0x00, 0x02, 0x3A),
                      command=0x0407, irq_line=0xFF, irq_pin=1,
                      caps=[(0x40, cap_pcie(4, 256, 128, 128, 3, 4, 3, 4, port=5, slot=True,
                                            dlactive=True, dllla=True, bwnot=True, linkcap2=0x0E,
                                            target=3, l0s=4, l1=6)),
                            (0x80, cap_msi(is64=False, enabled=True, addr=0xFEE00258, data=0)),
                            (0x90, cap_ssvid(0x8086, 0x7270)),
                            (0xA0, cap_pm(pmc=0xC803, pmcsr=0x0008))],
                      size=256)
    patch_pcie(rp, sltcap=5 << 19)
    hus = tbt_port(0x15EA, 5, (0x02, 0x03, 0x3A), (3, 4), (3, 4), linkcap2=0x0E)
    hds_nhi = tbt_port(0x15EA, 6, (0x03, 0x04, 0x04), (1, 4), (1, 4), dlactive=True, port=0)
    hds_tun = tbt_port(0x15EA, 6, (0x03, 0x05, 0x39), (1, 4), (1, 4), slot=True, hotplug=True,
                       dlactive=True, port=1, msi_on=True)
    eus = tbt_port(0x15EF, 5, (0x05, 0x06, 0x07), (1, 4), (1, 4))
    eds = tbt_port(0x15EF, 6, (0x06, 0x07, 0x07), (3, 4), (3, 4), slot=True, dlactive=True,
                   port=1, linkcap2=0x0E)
    nhi = build_config(0x8086, 0x15EB, 0x088000, 0x06, sv=0x8086, sd=0x0000, command=0x0406,
                       bars=(0xC4000000, 0xC4040000), irq_line=0xFF, irq_pin=1,
                       caps=[(0x80, cap_pm(pmc=0xC803, pmcsr=0x0008)),
                             (0x88, cap_msi(is64=True)),
                             (0xA0, cap_msix(16, 0, 0x0000, 0x1000)),
                             (0xC0, cap_pcie(0, 128, 128, 512, 1, 4, 1, 4))],
                       ext=[(0x100, ext_aer_short())], size=4096)
    p_rp = "pci0000:00/0000:00:1c.4"
    p_hus = p_rp + "/0000:02:00.0"
    p_hnhi = p_hus + "/0000:03:00.0"
    p_nhi = p_hnhi + "/0000:04:00.0"
    p_htun = p_hus + "/0000:03:01.0"
    p_eus = p_htun + "/0000:05:00.0"
    p_eds = p_eus + "/0000:06:01.0"
    t.pci(p_rp, vendor=0x8086, device=0xA33C, cls=0x060400, rev=0xF0, sv=0x8086, sd=0x7270,
          irq=122, config=rp, driver="pcieport", link=sysfs_link(rp), msi=[(122, "msi")])
    for path, dev, cfg, irq, msi in ((p_hus, 0x15EA, hus, 16, []), (p_hnhi, 0x15EA, hds_nhi, 16, []),
                                     (p_htun, 0x15EA, hds_tun, 124, [(124, "msi")]),
                                     (p_eus, 0x15EF, eus, 16, []), (p_eds, 0x15EF, eds, 16, [])):
        t.pci(path, vendor=0x8086, device=dev, cls=0x060400, rev=0x06, sv=0x0000, sd=0x0000,
              irq=irq, config=cfg, driver="pcieport", link=sysfs_link(cfg), msi=msi)
    dn = t.pci(p_nhi, vendor=0x8086, device=0x15EB, cls=0x088000, rev=0x06, sv=0x8086,
               sd=0x0000, irq=16, config=nhi, driver="thunderbolt", link=sysfs_link(nhi),
               msi=[(125, "msix"), (126, "msix")])
    # Thunderbolt domain and routers, as drivers/thunderbolt registers them under the NHI.
    dom = dn + "/domain0"
    for k, v in (("security", "user"), ("iommu_dma_protection", "0"), ("deauthorization", "0")):
        t.attr(dom + "/" + k, v)
    host = dom + "/0-0"
    dev = host + "/0-1"
    for k, v in (("authorized", "1"), ("generation", "3"), ("vendor_name", "Intel"),
                 ("unique_id", "d1030000-0080-8708-2317-0d1b8c46a21b")):
        t.attr(host + "/" + k, v)
    for k, v in (("authorized", "1"), ("boot", "0"), ("generation", "3"),
                 ("vendor_name", "ACASIS"), ("device_name", "TBU401"),
                 ("rx_speed", "20.0 Gb/s"), ("rx_lanes", "2"), ("tx_speed", "20.0 Gb/s"),
                 ("tx_lanes", "2"), ("unique_id", "00e14e2b-5a0c-3f40-ffff-ffffffffffff")):
        t.attr(dev + "/" + k, v)
    for name, path in (("domain0", dom), ("0-0", host), ("0-1", dev)):
        t.link("sys/bus/thunderbolt/devices/" + name, path)
        t.link(path + "/subsystem", "sys/bus/thunderbolt")
    irqs = legacy_irqs(n, True, extra=[(16, 16, "fasteoi", "i801_smbus", [0] * n)])
    irqs.append(msi_irq(122, 0, 0x1C, 4, 0, "PCIe PME", [0] * n, ir=True, aff="0-11", eff="5",
                        msix=False))
    irqs.append(msi_irq(124, 3, 1, 0, 0, "pciehp", [0, 0, 0, 0, 7] + [0] * (n - 5), ir=True,
                        aff="0-11", eff="4", msix=False))
    for k, irq in enumerate((125, 126)):
        irqs.append(msi_irq(irq, 4, 0, 0, k, "thunderbolt", [0] * n, ir=True, aff="0-11",
                            eff=str(6 + k)))
    rx = [25000 + 500 * j for j in range(n)]
    if nic == "aqc107":
        mac = "00:30:1e:4a:7b:c2"
        c = build_config(0x1D6A, 0x07B1, 0x020000, 0x02, sv=0x1D6A, sd=0x0001, command=0x0406,
                         bars=(0xB4000004, 0, 0xB4040004, 0, 0xB3C00004, 0), irq_line=0xFF,
                         irq_pin=1,
                         caps=[(0x40, cap_pm(pmc=0xC823, pmcsr=0x0008)),
                               (0x50, cap_msi(is64=True, maskable=True)),
                               (0x70, cap_pcie(0, 512, 128, 512, 3, 4, 3, 4, linkcap2=0x0E,
                                               target=3)),
                               (0xB0, cap_msix(32, 2, 0x0000, 0x0200))],
                         ext=[(0x100, ext_aer_short()), (0x150, ext_dsn(dsn_from_mac(mac)))],
                         size=4096)
        vecs = list(range(140, 149))
        d = t.pci(p_eds + "/0000:07:00.0", vendor=0x1D6A, device=0x07B1, cls=0x020000, rev=0x02,
                  sv=0x1D6A, sd=0x0001, irq=16, config=c, driver="atlantic", link=sysfs_link(c),
                  msi=[(v, "msix") for v in vecs])
        t.netdev(d, "enp7s0", mac=mac, ifindex=2, speed=10000, duplex="full", rxq=8, txq=8,
                 stats={"rx_bytes": 512345678901, "tx_bytes": 498765432109,
                        "rx_packets": 341234567, "tx_packets": 332345678})
        modes = ["100baseT/Full", "1000baseT/Full", "10000baseT/Full", "2500baseT/Full",
                 "5000baseT/Full"]
        t.ethtool("enp7s0", {"driver": "atlantic", "version": "6.1.0-18-amd64",
                             "firmware_version": "3.1.88", "bus_info": "0000:07:00.0",
                             "link": {"speed_mbps": 10000, "duplex": "full", "autoneg": True,
                                      "port": "TP", "supported": modes, "advertised": modes,
                                      "source": "GLINKSETTINGS"},
                             "channels": {"max_rx": 0, "max_tx": 0, "max_other": 1,
                                          "max_combined": 8, "rx": 0, "tx": 0, "other": 1,
                                          "combined": 8},
                             "perm_addr": mac})
        for q in range(8):
            cnt = [0] * n
            cnt[q] = 6123456 + 10101 * q
            irqs.append(msi_irq(vecs[q], 7, 0, 0, q, "enp7s0", cnt, ir=True, aff=str(q),
                                eff=str(q)))
            rx[q] += 5900000 + 9000 * q
        irqs.append(msi_irq(vecs[8], 7, 0, 0, 8, "enp7s0", [4] + [0] * (n - 1), ir=True,
                            aff="0-11", eff="0"))
    else:
        for fn in (0, 1):
            mac = "0c:42:a1:5e:33:%02x" % (0x70 + fn)
            bdf = "0000:07:00.%d" % fn
            name = "enp7s0f%dnp%d" % (fn, fn)
            c = build_config(0x15B3, 0x1015, 0x020000, 0x00, sv=0x15B3, sd=0x0003, multi=True,
                             command=0x0406, bars=(0xB000000C + 0x02000000 * fn, 0),
                             irq_line=0xFF, irq_pin=1,
                             caps=[(0x60, cap_pcie(0, 512, 128, 512, 3, 8, 3, 4, linkcap2=0x0E,
                                                   target=3, aspm_sup=0)),
                                   (0x48, cap_vpd()),
                                   (0x9C, cap_msix(64, 0, 0x2000, 0x3000)),
                                   (0x40, cap_pm(pmc=0x0003, pmcsr=0x0008))],
                             ext=[(0x100, ext_aer_short()), (0x150, ext_ari(1 if fn == 0 else 0))],
                             size=4096)
            patch_pcie(c, devcap_or=0x20 | 1 << 28)
            vecs = list(range(140 + 13 * fn, 153 + 13 * fn))
            d = t.pci(p_eds + "/" + bdf, vendor=0x15B3, device=0x1015, cls=0x020000, rev=0x00,
                      sv=0x15B3, sd=0x0003, irq=16 + fn, config=c, driver="mlx5_core",
                      link=sysfs_link(c), msi=[(v, "msix") for v in vecs])
            busy = fn == 0
            nd = t.netdev(d, name, mac=mac, ifindex=2 + fn, speed=25000, duplex="full", rxq=12,
                          txq=12, xps=[cpumask([q], n) for q in range(12)],
                          stats={"rx_bytes": 1023456789012 if busy else 61234567,
                                 "tx_bytes": 287654321098 if busy else 71234567,
                                 "rx_packets": 681234567 if busy else 512345,
                                 "tx_packets": 191234567 if busy else 498765})
            t.attr(nd + "/phys_port_name", "p%d" % fn)
            modes = ["1000baseKX/Full", "10000baseKR/Full", "25000baseCR/Full",
                     "25000baseKR/Full", "25000baseSR/Full"]
            t.ethtool(name, {"driver": "mlx5_core", "version": "6.1.0-18-amd64",
                             "firmware_version": "14.32.1010 (MT_2420110034)", "bus_info": bdf,
                             "link": {"speed_mbps": 25000, "duplex": "full", "autoneg": False,
                                      "port": "DA", "supported": modes, "advertised": modes,
                                      "source": "GLINKSETTINGS"},
                             "channels": {"max_rx": 0, "max_tx": 0, "max_other": 0,
                                          "max_combined": 12, "rx": 0, "tx": 0, "other": 0,
                                          "combined": 12},
                             "perm_addr": mac})
            irqs.append(msi_irq(vecs[0], 7, 0, fn, 0, "mlx5_async0@pci:" + bdf,
                                [120 + fn] + [0] * (n - 1), ir=True, aff="0-11", eff="0"))
            for q in range(12):
                cnt = [0] * n
                cnt[q] = (4123456 + 7777 * q) if busy else (210 + q)
                irqs.append(msi_irq(vecs[1 + q], 7, 0, fn, 1 + q,
                                    "mlx5_comp%d@pci:%s" % (q, bdf), cnt, ir=True, aff=str(q),
                                    eff=str(q)))
                if busy:
                    rx[q] += 4100000 + 8000 * q
    soft = [(rx[j] + 90000, 0, 1700 + 29 * j, 0) for j in range(n)]
    t.proc(prec=3, irqs=irqs, arch=x86_arch_lines(n, 3300000), stat_cpu=stat_rows(
           n, {j: (52000 + 211 * j, 47000 + 97 * j, 0, 260000 + 700 * j) for j in range(8)}),
           softirqs=softirq_rows(n, rx, [610000 + 2000 * j for j in range(n)]), softnet=soft,
           nr_irqs=488, ctxt=345678901, procs=76543)
    t.note("Sources for the Thunderbolt part: the tunnel's reported link (2.5 GT/s x4 at a "
           "Thunderbolt bridge port) is the ArchWiki eGPU dmesg line (" + URL_ARCHWIKI_EGPU +
           ", src/dmesg-TB3-egpu-*); the bridge and NHI IDs (8086:15ea JHL7540 Titan Ridge 4C "
           "bridge, 15eb its NHI, 15ef JHL7440 Titan Ridge DD bridge) are pci.ids (" + URL_PCIIDS +
           ", src/pciids-*); the /sys/bus/thunderbolt attributes and formats are the kernel's "
           "ABI file and switch.c (" + URL_TB_ABI + ", src/sysfs-bus-thunderbolt-*). No lspci of "
           "a Titan Ridge port was found: every config below is reconstructed.")
    t.note("Topology (reconstructed, the usual laptop layout): PCH root port 00:1c.4 "
           "[8086:a33c] (pci.ids: 300/C240 Series Chipset Family PCIe Root Port #5; rev f0, SSVID "
           "8086:7270 invented) LnkCap/LnkSta 8 GT/s x4 -> 02:00.0 Titan Ridge 4C upstream port "
           "[8086:15ea] rev 06 (LnkCap/LnkSta 8 GT/s x4) -> its downstream ports 03:00.0 (to the "
           "NHI 04:00.0 [8086:15eb], driver thunderbolt, 2.5 GT/s x4 both ends) and 03:01.0 "
           "(the hot-plug port carrying the PCIe tunnel: LnkCap/LnkSta 2.5 GT/s x4, Slot+ "
           "HotPlug+) -> enclosure 05:00.0 Titan Ridge DD upstream port [8086:15ef] (LnkCap/LnkSta "
           "2.5 GT/s x4) -> its downstream port 06:01.0 (LnkCap/LnkSta 8 GT/s x4: the real PCIe "
           "link to the M.2 -> PCIe x4 adapter) -> the NIC at 07:00. The host controller's USB "
           "function and the enclosure's other ports are left out (not on the path).")
    t.note("Every Titan Ridge bridge config (4096 bytes, built by gen.py) carries Intel's "
           "Thunderbolt VSEC: extended capability 0x000b at 0x200 with VSEC ID 0x1234 (rev 1, "
           "length 0x10 invented), the test Linux uses for pci_dev.is_thunderbolt; AER at 0x100; "
           "PM/MSI/PCIe at 80/88/c0 invented; MPS 128. The NHI and the NIC carry no such VSEC. "
           "LnkCap2 is 0 on the 2.5 GT/s ports (so max_link_speed comes from LnkCap: 2.5 GT/s; "
           "pciutils issue #38 reports kernels reading a higher LnkCap2 on some TB ports, not "
           "modelled) and 2.5-8 GT/s on the 8 GT/s ones. sysfs link files are decoded from the "
           "configs.")
    t.note("/sys/bus/thunderbolt (reconstructed, formats per the ABI file): devices/domain0, "
           "0-0 and 0-1 are links into the NHI's domain0/ as drivers/thunderbolt registers them. "
           "domain0: security user, iommu_dma_protection 0, deauthorization 0. 0-0 (host "
           "router): authorized 1, generation 3, vendor_name Intel, unique_id; no link "
           "attributes (switch.c hides rx/tx_speed/lanes on the root router). 0-1 (the "
           "enclosure): authorized 1, boot 0, generation 3, rx_speed/tx_speed '20.0 Gb/s', "
           "rx_lanes/tx_lanes 2 (a bonded TB3 link: 40 Gb/s on the cable), vendor_name ACASIS "
           "and device_name TBU401 (the enclosure model kittenlabs used; the DROM strings "
           "themselves are a guess), unique_id invented. No numeric vendor/device, no "
           "nvm_version.")
    t.note("Host (invented): Coffee Lake-H laptop, 12 CPUs (i7-8750H class), numa_node -1, "
           "kernel 6.1.0-18-amd64 (13-column softnet_stat, IR-PCI-MSI); root port MSI 122 'PCIe "
           "PME', tunnel port MSI 124 'pciehp', NHI MSI-X 125-126 'thunderbolt'; the bridges' "
           "irq files read 16 (INTx, unused).")
    return t


@tree
def t_tb3_10g_enclosure():
    t = Tree("tb3-10g-enclosure",
             URL_ARCHWIKI_EGPU + " (the 2.5 GT/s x4 Thunderbolt tunnel link), " + URL_PCIIDS +
             " (Titan Ridge IDs), " + URL_TB_ABI + " (/sys/bus/thunderbolt); everything else "
             "reconstructed",
             "Laptop with a discrete Titan Ridge 4C Thunderbolt 3 controller [8086:15ea] on PCH root "
             "port 00:1c.4 (8 GT/s x4) and a Titan Ridge DD enclosure [8086:15ef] on its PCIe "
             "tunnel: the tunnel hop 03:01.0 -> 05:00.0 reports 2.5 GT/s x4 (both ends carry "
             "Intel's Thunderbolt VSEC 0x1234), the enclosure's real link to the Aquantia AQC107 "
             "[1d6a:07b1] at 07:00.0 is 8 GT/s x4 (driver atlantic, enp7s0 at 10000 full, 8 "
             "queues). /sys/bus/thunderbolt: 0-1 at 2 x 20.0 Gb/s. The 2.5 GT/s x4 (8 Gb/s) is "
             "nominal, not the ceiling.")
    t.note("NIC (reconstructed): AQC107 rev 02, subsystem 1d6a:0001 (Aquantia's own; pci.ids "
           "lists only OEM subsystems), LnkCap/LnkSta 8 GT/s x4 (the chip is PCIe 3.0 x4), "
           "MPS 512 capable / 128 set, caps PM 40 / MSI 50 / PCIe 70 / MSI-X b0, AER and DSN; "
           "netdev enp7s0, MAC invented, 10000 full; 9 MSI-X vectors (8 queue vectors and the "
           "link vector), all named 'enp7s0' as atlantic names them (aq_pci_func_alloc_irq and "
           "the link IRQ both pass ndev->name), queue vector q on CPU q; ethtool: driver atlantic, "
           "version = kernel release, firmware 3.1.88 (invented), modes 100M/1G/2.5G/5G/10G "
           "baseT Full, autoneg on, TP, channels 8 combined + 1 other. /proc synthetic: a "
           "bidirectional test over the NIC.")
    return tb3_laptop(t, "aqc107")


@tree
def t_tb3_25g_enclosure():
    t = Tree("tb3-25g-enclosure",
             URL_KITTENLABS + " (ConnectX-4 Lx in a JHL7440 TB3 enclosure, ~20.5 Gb/s measured), " +
             URL_ARCHWIKI_EGPU + " (the 2.5 GT/s x4 tunnel link), " + URL_PCIIDS + ", " +
             URL_TB_ABI + "; everything else reconstructed",
             "The tb3-10g-enclosure laptop and enclosure with a dual-port Mellanox ConnectX-4 Lx "
             "[15b3:1015] subsys 15b3:0003 (MCX4121A-ACAT) at 07:00.0/.1 behind the M.2 -> PCIe x4 "
             "adapter: driver mlx5_core, enp7s0f0np0/enp7s0f1np1 at 25000 full, 12 queues each; "
             "LnkCap 8 GT/s x8, LnkSta 8 GT/s x4 under the enclosure's x4 downstream port (slot "
             "limited, ~31 Gb/s of PCIe), behind the 2.5 GT/s x4 nominal tunnel link. The real "
             "ceiling is the TB3 PCIe tunnel: kittenlabs measured 20467 Mbit/s on such a setup.")
    t.note("From kittenlabs (real, macOS host): a ConnectX-4 Lx in a TBU401 Thunderbolt 3 NVMe "
           "enclosure (JHL7440 = Titan Ridge DD, 8086:15ef) through an M.2 -> PCIe x4 adapter, "
           "Speedtest 20467 Mbit/s down / 5670 up (src/blog-ConnectX-4-Lx-*). The Linux host, "
           "its sysfs and everything below are reconstructed.")
    t.note("NIC (reconstructed): two functions 07:00.0/.1, rev 00, subsystem 15b3:0003 "
           "(MCX4121A-ACAT, pci.ids), LnkCap 8 GT/s x8 (the card is PCIe 3.0 x8), LnkSta 8 GT/s x4 "
           "(the adapter's four lanes), MPS 512 capable / 128 set, caps PM 40 / VPD 48 / PCIe 60 / "
           "MSI-X 9c as on ConnectX-4 Lx, AER and ARI; sysfs current 8.0 GT/s PCIe x4, max "
           "8.0 GT/s PCIe x8. mlx5_core: 13 MSI-X vectors per function (1 async + one completion "
           "vector per CPU), named 'mlx5_async0@pci:BDF' and 'mlx5_compN@pci:BDF' as "
           "pci_irq.c names them, compN on CPU N; netdevs enp7s0f0np0/enp7s0f1np1 "
           "(phys_port_name p0/p1), MACs invented (Mellanox OUI 0c:42:a1), 25000 full, 12 "
           "combined channels, XPS one CPU per queue; ethtool: firmware '14.32.1010 "
           "(MT_2420110034)' (invented), DA port, 1G-KX/10G-KR/25G-CR/KR/SR modes, autoneg off. "
           "Port 0 carries a one-way test, port 1 is idle (synthetic counters).")
    return tb3_laptop(t, "cx4lx")


@tree
def t_rtl8156_cdc_ncm():
    t = Tree("rtl8156-cdc-ncm",
             URL_OPENWRT_14731 + " (ethtool eth1 of an RTL8156B bound to cdc_ncm on a Raspberry Pi "
             "4 Model B, OpenWrt 23.05.2, kernel 5.15.137); USB identity 0bda:8156:3100 from " +
             URL_BBQQ_184,
             "Raspberry Pi 4 Model B (BCM2711, 4 Cortex-A72 CPUs, OpenWrt kernel 5.15.137): a Realtek "
             "RTL8156B USB 2.5GbE adapter [0bda:8156] bcdDevice 3100 at USB 3 port 2-1 of the VL805 "
             "xHCI [1106:3483] (PCIe 01:00.0 behind the BCM2711 root port [14e4:2711]), bound to "
             "cdc_ncm (configuration 2, interfaces 2-1:2.0/2.1), netdev eth1. ethtool answers the "
             "usbnet placeholder: 1000 Mb/s, duplex half, autoneg off, no supported or advertised "
             "modes, port TP. Not a duplex mismatch: there is no PHY behind these values.")
    t.ncpus = 4
    n = t.ncpus
    rp = build_config(0x14E4, 0x2711, 0x060400, 0x10, bridge=(0x00, 0x01, 0x01), command=0x0006,
                      irq_line=0xFF, irq_pin=1,
                      caps=[(0x48, cap_pm(pmc=0x4803, pmcsr=0x0008)),
                            (0xAC, cap_pcie(4, 512, 128, 512, 2, 1, 2, 1, dlactive=True,
                                            dllla=True, linkcap2=0x06, target=2))],
                      ext=[(0x100, ext_aer())], size=4096)
    xh = build_config(0x1106, 0x3483, 0x0C0330, 0x01, sv=0x1106, sd=0x3483, command=0x0406,
                      bars=(0x00000004, 0x00000006), irq_line=0xFF, irq_pin=1,
                      caps=[(0x80, cap_pm(pmc=0xC9C3, pmcsr=0x0008)),
                            (0x90, cap_msi(is64=True, enabled=True, addr=0xFFFFFFFC, data=0)),
                            (0xC4, cap_pcie(0, 128, 128, 512, 2, 1, 2, 1, linkcap2=0x06,
                                            target=2))],
                      ext=[(0x100, ext_aer_short())], size=4096)
    plat = "platform/scb/fd500000.pcie/pci0000:00"
    p_rp = plat + "/0000:00:00.0"
    p_xh = p_rp + "/0000:01:00.0"
    t.pci(p_rp, vendor=0x14E4, device=0x2711, cls=0x060400, rev=0x10, irq=28, config=rp,
          driver="pcieport", link=sysfs_link(rp))
    dx = t.pci(p_xh, vendor=0x1106, device=0x3483, cls=0x0C0330, rev=0x01, sv=0x1106, sd=0x3483,
               irq=29, config=xh, driver="xhci_hcd", link=sysfs_link(xh), msi=[(29, "msi")])
    hub = dx + "/usb2"
    dev = hub + "/2-1"
    ctl = dev + "/2-1:2.0"
    dat = dev + "/2-1:2.1"
    for k, v in (("idVendor", "1d6b"), ("idProduct", "0003"), ("bcdDevice", "0515"),
                 ("speed", "5000"), ("version", " 3.00"), ("manufacturer",
                  "Linux 5.15.137 xhci-hcd"), ("product", "xHCI Host Controller"),
                 ("serial", "0000:01:00.0"), ("busnum", "2"), ("devnum", "1"), ("devpath", "0"),
                 ("maxchild", "4"), ("bDeviceClass", "09"), ("bNumConfigurations", "1"),
                 ("bConfigurationValue", "1"), ("bNumInterfaces", " 1"), ("authorized", "1"),
                 ("rx_lanes", "1"), ("tx_lanes", "1")):
        t.attr(hub + "/" + k, v)
    for k, v in (("idVendor", "0bda"), ("idProduct", "8156"), ("bcdDevice", "3100"),
                 ("speed", "5000"), ("version", " 3.20"), ("manufacturer", "Realtek"),
                 ("product", "USB 10/100/1G/2.5G LAN"), ("serial", "001000E04C681A2B"),
                 ("busnum", "2"), ("devnum", "2"), ("devpath", "1"), ("maxchild", "0"),
                 ("bDeviceClass", "00"), ("bDeviceSubClass", "00"), ("bDeviceProtocol", "00"),
                 ("bMaxPacketSize0", "9"), ("bNumConfigurations", "3"),
                 ("bConfigurationValue", "2"), ("bNumInterfaces", " 2"), ("bmAttributes", "a0"),
                 ("bMaxPower", "256mA"), ("authorized", "1"), ("removable", "unknown"),
                 ("rx_lanes", "1"), ("tx_lanes", "1")):
        t.attr(dev + "/" + k, v)
    for d, num, cls, sub, proto, alt, eps in ((ctl, 0, 0x02, 0x0D, 0x00, 0, 1),
                                              (dat, 1, 0x0A, 0x00, 0x01, 1, 2)):
        for k, v in (("bInterfaceClass", "%02x" % cls), ("bInterfaceSubClass", "%02x" % sub),
                     ("bInterfaceProtocol", "%02x" % proto), ("bInterfaceNumber", "%02x" % num),
                     ("bAlternateSetting", "%2d" % alt), ("bNumEndpoints", "%02x" % eps),
                     ("authorized", "1"), ("supports_autosuspend", "1"),
                     ("modalias", "usb:v0BDAp8156d3100dc00dsc00dp00ic%02Xisc%02Xip%02Xin%02X"
                      % (cls, sub, proto, num))):
            t.attr(d + "/" + k, v)
    for name, path, drv in (("usb2", hub, "usb"), ("2-1", dev, "usb"), ("2-1:2.0", ctl, "cdc_ncm"),
                            ("2-1:2.1", dat, "cdc_ncm")):
        t.link("sys/bus/usb/devices/" + name, path)
        t.link(path + "/subsystem", "sys/bus/usb")
        t.mkdir("sys/bus/usb/drivers/" + drv)
        t.link(path + "/driver", "sys/bus/usb/drivers/" + drv)
    mac = "00:e0:4c:68:1a:2b"
    t.netdev(ctl, "eth1", mac=mac, ifindex=3, speed=1000, duplex="half", rxq=1, txq=1,
             stats={"rx_bytes": 118234567890, "tx_bytes": 9123456789, "rx_packets": 81234567,
                    "tx_packets": 23456789})
    t.ethtool("eth1", {"driver": "cdc_ncm", "version": "5.15.137", "firmware_version": "CDC NCM",
                       "bus_info": "usb-0000:01:00.0-1",
                       "link": {"speed_mbps": 1000, "duplex": "half", "autoneg": False,
                                "port": "TP", "source": "GLINKSETTINGS"},
                       "perm_addr": mac, "errors": {"channels": "operation not supported"}})

    def gic(irq, hw, name, counts, level="Level", chip="GICv2", eff="0"):
        return dict(irq=irq, hwirq=hw, chip=chip, level=level, name=name, counts=counts,
                    aff="0-3", eff=eff, node=0)
    irqs = [gic(11, 30, "arch_timer", [3187654, 1123456, 1098765, 1087654], eff="0-3"),
            gic(14, 65, "fe00b880.mailbox", [12345, 0, 0, 0]),
            gic(18, 153, "uart-pl011", [211, 0, 0, 0]),
            gic(24, 158, "mmc0", [98765, 0, 0, 0]),
            gic(28, 175, "PCIe PME, aerdrv", [0, 0, 0, 0]),
            gic(29, 524288, "xhci_hcd", [41234567, 0, 0, 0], level="Edge",
                chip="BRCM STB PCIe MSI")]
    ipis = ["Rescheduling interrupts", "Function call interrupts", "CPU stop interrupts",
            "CPU stop (for crash dump) interrupts", "Timer broadcast interrupts",
            "IRQ work interrupts", "CPU wake-up interrupts"]
    arch = []
    for i, desc in enumerate(ipis):
        cnt = [[98765, 45678, 44321, 43210], [2345, 3456, 3321, 3210]][i] if i < 2 else \
            [0, 0, 0, 0] if i != 5 else [123, 45, 44, 43]
        arch.append("%*s%u:" % (2, "IPI", i) + "".join("%10u " % v for v in cnt) + "      " + desc)
    arch.append("%*s: %10u" % (3, "Err", 0))
    rx = [61234567, 123456, 118765, 117654]
    t.proc(prec=3, irqs=irqs, arch=arch, stat_cpu=stat_rows(n, {0: (21000, 88000, 0, 1210000)}),
           softirqs=softirq_rows(n, rx, [4123456, 3456, 3321, 3210]),
           softnet=[(81234567, 18234, 912345, 0), (120345, 0, 12, 0), (118234, 0, 9, 0),
                    (117123, 0, 11, 0)], nr_irqs=128, ctxt=234567890, procs=34567)
    t.note("From the OpenWrt issue (real): the platform (Raspberry Pi 4 Model B Rev 1.4, "
           "bcm27xx/bcm2711, aarch64, kernel 5.15.137), netdev eth1, and the ethtool answer: "
           "no supported ports or link modes, supports auto-negotiation No, advertised nothing, "
           "Speed 1000Mb/s, Duplex Half, Auto-negotiation off, Port Twisted Pair, link detected "
           "(ethtool/eth1.json holds exactly that; `ethtool -s eth1 duplex full` answered "
           "'netlink error: Not supported', which has no field). The issue's title says "
           "RTL8156B; its modinfo output shows r8152 present but cdc_ncm bound (half duplex is "
           "the usbnet placeholder: usbnet_get_link_ksettings_internal never sets duplex).")
    t.note("From the bb-qq/r8152 issue (real): the RTL8156B's USB identity 0bda:8156 with "
           "bcdDevice 3100, product 'USB 10/100/1G/2.5G LAN', manufacturer Realtek, and the "
           "serial pattern (the MAC with a prefix); here it sits on a USB 3 port (speed 5000), "
           "not the USB 2.0 port of that capture.")
    t.note("Reconstructed: the Pi 4's PCIe/USB path as the kernel lays it out on this board: "
           "platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0 (BCM2711 root port [14e4:2711] "
           "rev 10) -> 0000:01:00.0 (VIA VL805 xHCI [1106:3483] rev 01, subsystem 1106:3483, "
           "driver xhci_hcd, one MSI) at 5 GT/s x1 both ends (4096-byte configs built by gen.py; "
           "sysfs link files decoded from them) -> usb2 (SuperSpeed root hub) -> 2-1 (the "
           "adapter) -> 2-1:2.0 (CDC NCM control interface, class 02/0d, driver cdc_ncm, net/eth1) "
           "and 2-1:2.1 (data interface, class 0a, altsetting 1, driver cdc_ncm). USB attribute "
           "values beyond the ids (version ' 3.20', bMaxPower 256mA, bNumConfigurations 3, "
           "bConfigurationValue 2, serial, devnum) are plausible, not captured; the USB 2.0 "
           "root hub usb1, its VL805 hub and the Pi's own eth0 (bcmgenet) are left out.")
    t.note("Reconstructed ethtool fields beside the issue's: driver cdc_ncm, version 5.15.137 "
           "(the kernel release ethtool fills in), firmware 'CDC NCM' (usbnet reports the "
           "driver_info description; newer kernels print 'CDC NCM (NO ZLP)', which release "
           "renamed it was not checked), bus_info usb-0000:01:00.0-1, channels unsupported "
           "(usbnet has no get_channels). MAC 00:e0:4c:68:1a:2b (Realtek OUI) invented.")
    t.note("/proc (synthetic, arm64 layout of kernel 5.15: GICv2 lines with GENERIC_IRQ_SHOW_LEVEL "
           "'Level'/'Edge', the xHCI MSI on the 'BRCM STB PCIe MSI' chip with hwirq 524288 = "
           "01:00.0 << 11, IPI0-IPI6 and Err rows, 13-column softnet_stat): a USB NIC has no IRQ "
           "of its own; all of its traffic arrives through xhci_hcd, pinned to CPU 0 like every "
           "SPI on this SoC, and CPU 0 carries the NET_RX load with drops and time squeezes.")
    return t


@tree
def t_rtl8111_100m_half():
    t = Tree("rtl8111-100m-half",
             "https://github.com/pciutils/pciutils/blob/0f5b941aa5cf8b1b126ff3e4176b1c32b2158289/"
             "tests/tree-asus-p6t6 (configs of 00:1c.2 and 07:00.0); the 100 Mb/s half-duplex "
             "link is constructed for the test",
             "ASUS P6T6 (X58 + ICH10) with one onboard RTL8111/8168 [10ec:8168] at 07:00.0 behind "
             "root port 00:1c.2 (2.5 GT/s x1), driver r8169, netdev enp7s0, whose real PHY "
             "autonegotiated 100 Mb/s half duplex: supported and advertised 10/100 half+full and "
             "1000baseT/Full, autoneg on (a cable with two good pairs and a half-duplex partner). "
             "The true positive next to rtl8156-cdc-ncm's placeholder.")
    t.ncpus = 8
    n = t.ncpus
    cfgs = load_lspci_hex(SRC_ICH10)
    rpc = cfgs["00:1c.2"]
    t.pci("pci0000:00/0000:00:1c.2", vendor=rd16(rpc, 0), device=rd16(rpc, 2), cls=0x060400,
          rev=rpc[8], sv=rd16(rpc, find_cap(rpc, 0x0D) + 4), sd=rd16(rpc, find_cap(rpc, 0x0D) + 6),
          irq=rpc[0x3C], config=rpc, driver="pcieport", link=sysfs_link(rpc))
    c = cfgs["07:00.0"]
    assert rpc[0x19] == 7
    d = t.pci("pci0000:00/0000:00:1c.2/0000:07:00.0", vendor=rd16(c, 0), device=rd16(c, 2),
              cls=0x020000, rev=c[8], sv=rd16(c, 0x2C), sd=rd16(c, 0x2E), irq=27, config=c,
              driver="r8169", link=sysfs_link(c), msi=[(27, "msi")])
    mac = "00:1a:92:3e:55:a1"
    t.netdev(d, "enp7s0", mac=mac, ifindex=2, speed=100, duplex="half", rxq=1, txq=1,
             stats={"rx_bytes": 81234567890, "tx_bytes": 40123456789, "rx_packets": 61234567,
                    "tx_packets": 40987654})
    t.ethtool("enp7s0", {"driver": "r8169", "version": "6.1.0-18-amd64", "bus_info": "0000:07:00.0",
                         "link": {"speed_mbps": 100, "duplex": "half", "autoneg": True,
                                  "port": "MII", "supported": IGB_MODES, "advertised": IGB_MODES,
                                  "source": "GLINKSETTINGS"},
                         "perm_addr": mac, "errors": {"channels": "operation not supported"}})
    irqs = legacy_irqs(n, False, extra=[(16, 16, "fasteoi", "uhci_hcd:usb3", [0] * n)])
    cnt = [0] * n
    cnt[2] = 7012345
    irqs.append(msi_irq(27, 7, 0, 0, 0, "enp7s0", cnt, ir=False, aff="0-7", eff="2"))
    rx = [31000 + 500 * j for j in range(n)]
    rx[2] = 6998765
    soft = [(30500 + 300 * j, 0, 0, 0) for j in range(n)]
    soft[2] = (7001234, 0, 312, 0)
    t.proc(prec=3, irqs=irqs, arch=x86_arch_lines(n, 2700000, with_dfr=False),
           stat_cpu=stat_rows(n, {2: (20100, 30100, 0, 212000)}),
           softirqs=softirq_rows(n, rx, [1100 + 10 * j for j in range(n)]), softnet=soft,
           nr_irqs=488, ctxt=98765432, procs=23456)
    t.note("Constructed for the test: the 100 Mb/s half-duplex link. The configs of root port "
           "00:1c.2 and of the RTL8111 at 07:00.0 are the pciutils dump's 4096 bytes unchanged "
           "(same source as rtl8111-ich10-x58; 2.5 GT/s x1 both ends, sysfs link files decoded "
           "from them); the rest of that machine (00:1c.0, 00:1c.1, 08:00.0) is left out.")
    t.note("Invented: sysfs speed 100 and duplex half; ethtool/enp7s0.json speed 100, duplex "
           "half, autoneg on, port MII (r8169 uses phylib), supported and advertised "
           "10baseT/Half 10baseT/Full 100baseT/Half 100baseT/Full 1000baseT/Full (a real PHY: "
           "the link is what autonegotiation settled on, e.g. a cable with only two usable pairs "
           "and a 100 Mb/s half-duplex hub on the far side; the schema has no link-partner "
           "field). No published dump of a genuine 100/half link was found. Collision counters "
           "are not modelled (r8169 reports them in ethtool -S, which the tree does not carry).")
    t.note("Host as rtl8111-ich10-x58: 8 CPUs, kernel strings of 6.1.0-18-amd64, numa_node -1, "
           "the RTL8111's single MSI (irq 27, named enp7s0) on CPU 2, MAC 00:1a:92:3e:55:a1 "
           "(ASUS OUI, invented), channels unsupported; /proc synthetic.")
    return t



def main(argv):
    names = argv[1:] or sorted(TREES)
    for n in names:
        if n not in TREES:
            raise SystemExit("unknown tree %s (have: %s)" % (n, ", ".join(sorted(TREES))))
    for n in names:
        t = TREES[n]()
        assert t.name == n, (t.name, n)
        t.write()
        print("wrote", n)
    if not argv[1:]:
        with open(os.path.join(HERE, "README.md"), "w") as f:
            f.write(INDEX_HEAD)
            index = {n: TREES[n]().summary for n in TREES}
            index.update(CAPTURED)
            for n in sorted(index):
                f.write("- `%s/`: %s\n" % (n, index[n]))


# Trees captured with `nicdiag snapshot`, not generated: listed in the index only.
CAPTURED = {
    "firecracker-virtio-vm": "this project's development VM, taken with `nicdiag snapshot` (not "
                             "generated by gen.py): Firecracker guest, kernel 6.18, eth0 = virtio_net "
                             "on conventional PCI 0000:00:03.0 (netdev under virtio2), ifb0/ifb1/lo "
                             "virtual.",
    "qemu-lab-links": "the QEMU lab's `links` guest (QEMU 10.0 TCG, kernel 6.1, 2 vCPUs), taken with "
                      "`nicdiag snapshot` (not generated by gen.py): e1000 and e1000e emulated by QEMU "
                      "(eth0, eth1), vmxnet3 (eth2), virtio-net without multiqueue (eth3, one queue pair) "
                      "and with mq=on, 4 queue pairs (eth4); DMI says QEMU.",
    "qemu-lab-igb-vfs": "the QEMU lab's `igb` guest (QEMU 10.0 TCG, kernel 6.1), taken with `nicdiag "
                        "snapshot` (not generated by gen.py): QEMU's 82576 (igb, eth0) with two igbvf VFs "
                        "(eth1, eth2) and `ip link set eth0 vf 0 max_tx_rate 100` in netlink/eth0.json.",
}


INDEX_HEAD = """# Snapshot trees

Machine snapshots in the layout of docs/design.md section 4 (sys/, proc/, ethtool/ relative to the
tree root), used as test fixtures. Every tree has a README.md whose first line is its source and
which lists every value that was reconstructed rather than captured. Do not edit trees by hand:
change gen.py and run `python3 testdata/snapshots/gen.py` (stdlib only, deterministic; it reads
only testdata/snapshots/src/, copies of the published dumps listed in docs/fixtures.md).

"""

if __name__ == "__main__":
    main(sys.argv)
