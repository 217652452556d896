package lab

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Section is the output of one `sec NAME CMD` in the guest.
type Section struct {
	Name   string
	Stdout string
	Stderr string
	RC     int
}

// Sections parses the sections that `sec` printed, by name. A section whose
// END marker is missing (the guest stopped in the middle) is left out.
func Sections(output string) map[string]Section {
	out := map[string]Section{}
	rest := output
	for {
		i := strings.Index(rest, "@@@SECTION ")
		if i < 0 {
			return out
		}
		rest = rest[i+len("@@@SECTION "):]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return out
		}
		name := rest[:nl]
		rest = rest[nl+1:]
		errMark := "\n@@@STDERR " + name + "\n"
		j := strings.Index(rest, errMark)
		if j < 0 {
			return out
		}
		s := Section{Name: name, Stdout: rest[:j]}
		rest = rest[j+len(errMark):]
		endMark := "\n@@@END " + name + " rc="
		k := strings.Index(rest, endMark)
		if k < 0 {
			return out
		}
		s.Stderr = rest[:k]
		rest = rest[k+len(endMark):]
		nl = strings.IndexByte(rest, '\n')
		if nl < 0 {
			nl = len(rest)
		}
		s.RC, _ = strconv.Atoi(rest[:nl])
		rest = rest[nl:]
		out[name] = s
	}
}

// NetFact is one line of the guest's `netfacts`: what sysfs says about one
// network interface, the ground truth nicdiag's answers are held against.
type NetFact struct {
	Name      string
	Function  string // PCI function ("0000:01:00.0"); "none" when not on PCI
	PCIDriver string // driver of the PCI function ("virtio-pci")
	NetDriver string // driver of the netdev's device ("virtio_net")
	VendorID  uint16
	DeviceID  uint16
	MSI       []int // msi_irqs/, ascending
	IRQ       int   // the function's legacy irq file
	Link      *Link // nil when the function has no link attributes
	PhysFn    string
	VFs       []string
	TotalVFs  int
}

// Link is a PCI function's link attributes as sysfs gives them.
type Link struct {
	CurrentSpeed float64
	CurrentWidth int
	MaxSpeed     float64
	MaxWidth     int
}

// ParseNetFacts parses the output of the guest's `netfacts`.
func ParseNetFacts(s string) ([]NetFact, error) {
	var out []NetFact
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		nf := NetFact{Name: f[0]}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			var err error
			switch k {
			case "fn":
				nf.Function = v
			case "pcidrv":
				nf.PCIDriver = v
			case "netdrv":
				nf.NetDriver = v
			case "vendor", "device":
				var n uint64
				n, err = strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 16)
				if k == "vendor" {
					nf.VendorID = uint16(n)
				} else {
					nf.DeviceID = uint16(n)
				}
			case "msi":
				nf.MSI, err = atois(v)
			case "irq":
				nf.IRQ, err = strconv.Atoi(v)
			case "link":
				if v == "none" {
					break
				}
				p := strings.Split(v, "/")
				if len(p) != 4 {
					err = errors.New("want 4 fields")
					break
				}
				l := &Link{}
				var e [4]error
				l.CurrentSpeed, e[0] = strconv.ParseFloat(p[0], 64)
				l.CurrentWidth, e[1] = strconv.Atoi(p[1])
				l.MaxSpeed, e[2] = strconv.ParseFloat(p[2], 64)
				l.MaxWidth, e[3] = strconv.Atoi(p[3])
				err = errors.Join(e[:]...)
				nf.Link = l
			case "physfn":
				nf.PhysFn = v
			case "vfs":
				if v != "" {
					nf.VFs = strings.Split(v, ",")
				}
			case "totalvfs":
				if v != "" {
					nf.TotalVFs, err = strconv.Atoi(v)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("lab: netfacts %q: %s: %w", line, k, err)
			}
		}
		out = append(out, nf)
	}
	return out, nil
}

// atois parses "1,2,3" ("" is none).
func atois(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, x := range strings.Split(s, ",") {
		n, err := strconv.Atoi(x)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// IRQRow is one numbered line of /proc/interrupts.
type IRQRow struct {
	IRQ    int
	PerCPU []uint64 // by column, CPU0 first
	Action string   // the device names at the end ("eth0-rx-0")
}

// ParseInterrupts parses the numbered lines of /proc/interrupts, keyed by
// action name (the lab's NICs never share a line).
func ParseInterrupts(s string) map[string]IRQRow {
	lines := strings.Split(s, "\n")
	out := map[string]IRQRow{}
	if len(lines) == 0 {
		return out
	}
	ncpu := len(strings.Fields(lines[0]))
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < ncpu+4 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(f[0], ":"))
		if err != nil {
			continue
		}
		r := IRQRow{IRQ: n, Action: strings.Join(f[ncpu+3:], " ")}
		for _, c := range f[1 : ncpu+1] {
			v, _ := strconv.ParseUint(c, 10, 64)
			r.PerCPU = append(r.PerCPU, v)
		}
		out[r.Action] = r
	}
	return out
}

// ParseSoftirqs parses /proc/softirqs into per-CPU counts by name ("NET_RX").
func ParseSoftirqs(s string) map[string][]uint64 {
	out := map[string][]uint64{}
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || !strings.HasSuffix(f[0], ":") {
			continue
		}
		var v []uint64
		for _, c := range f[1:] {
			n, _ := strconv.ParseUint(c, 10, 64)
			v = append(v, n)
		}
		out[strings.TrimSuffix(f[0], ":")] = v
	}
	return out
}

// ParseStats parses "name: value" lines, as `ethtool -S` prints them, into
// counters by name. Lines without an unsigned number after the colon (the
// "NIC statistics:" heading) are skipped.
func ParseStats(s string) map[string]uint64 {
	out := map[string]uint64{}
	for _, l := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		out[strings.TrimSpace(k)] = n
	}
	return out
}
