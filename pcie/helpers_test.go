package pcie

import (
	"bufio"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
)

// dump is one function from an lspci -vvv -xxx(x) text: its decoded text and
// its config-space bytes.
type dump struct {
	Text   string
	Config []byte
}

var (
	reDevLine = regexp.MustCompile(`^([0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) `)
	reHexLine = regexp.MustCompile(`^([0-9a-f]{2,3}): ((?:[0-9a-f]{2} ){15}[0-9a-f]{2})\s*$`)
)

// readDumps parses testdata/NAME into functions keyed by "BB:DD.F".
func readDumps(t testing.TB, name string) map[string]*dump {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*dump{}
	var cur *dump
	var text strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := reDevLine.FindStringSubmatch(line); m != nil {
			if cur != nil {
				cur.Text = text.String()
			}
			cur = &dump{}
			text.Reset()
			out[m[1]] = cur
		}
		if cur == nil {
			continue
		}
		if m := reHexLine.FindStringSubmatch(line); m != nil {
			off, _ := strconv.ParseInt(m[1], 16, 32)
			b, err := hex.DecodeString(strings.ReplaceAll(m[2], " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			for len(cur.Config) < int(off)+16 {
				cur.Config = append(cur.Config, 0)
			}
			copy(cur.Config[off:], b)
			continue
		}
		text.WriteString(line + "\n")
	}
	if cur != nil {
		cur.Text = text.String()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// lspciSays is what an lspci -vvv text prints for the Express capability.
type lspciSays struct {
	Version, PortType      string
	DevCapMPS, MPS, MRRS   int
	CapSpeed               float64
	CapWidth               int
	CapASPM                string
	CtlASPM                string
	RCB                    int
	StaSpeed               float64
	StaWidth               int
	Target                 float64
	Cap2Low, Cap2High      float64
	StaDowngraded, HasCap2 bool
}

var (
	reExpress = regexp.MustCompile(`Express \(v(\d)\) ([A-Za-z ]+?)(?: \(Slot[+-]\))?, `)
	reDevCap  = regexp.MustCompile(`DevCap:\s+MaxPayload (\d+) bytes`)
	reDevCtl  = regexp.MustCompile(`MaxPayload (\d+) bytes, MaxReadReq (\d+) bytes`)
	reLnkCap  = regexp.MustCompile(`LnkCap:\s+Port #\d+, Speed ([\d.]+)GT/s, Width x(\d+), ASPM ([^,\n]+)`)
	reLnkCtl  = regexp.MustCompile(`LnkCtl:\s+ASPM ([^;]+); RCB (\d+) bytes`)
	reLnkSta  = regexp.MustCompile(`LnkSta:\s+Speed ([\d.]+)GT/s( \(downgraded\))?, Width x(\d+)`)
	reLnkCtl2 = regexp.MustCompile(`LnkCtl2: Target Link Speed: ([\d.]+)GT/s`)
	reLnkCap2 = regexp.MustCompile(`LnkCap2: Supported Link Speeds: ([\d.]+)(?:-([\d.]+))?GT/s`)
)

// parseLspci reads the Express capability lines of an lspci -vvv block.
func parseLspci(t testing.TB, text string) lspciSays {
	t.Helper()
	var s lspciSays
	must := func(re *regexp.Regexp) []string {
		m := re.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("lspci text has no match for %s", re)
		}
		return m
	}
	atoi := func(x string) int { v, _ := strconv.Atoi(x); return v }
	atof := func(x string) float64 { v, _ := strconv.ParseFloat(x, 64); return v }
	m := must(reExpress)
	s.Version, s.PortType = m[1], m[2]
	s.DevCapMPS = atoi(must(reDevCap)[1])
	m = must(reDevCtl)
	s.MPS, s.MRRS = atoi(m[1]), atoi(m[2])
	m = must(reLnkCap)
	s.CapSpeed, s.CapWidth, s.CapASPM = atof(m[1]), atoi(m[2]), lspciASPM(m[3])
	m = must(reLnkCtl)
	s.CtlASPM, s.RCB = lspciASPM(m[1]), atoi(m[2])
	m = must(reLnkSta)
	s.StaSpeed, s.StaDowngraded, s.StaWidth = atof(m[1]), m[2] != "", atoi(m[3])
	s.Target = atof(must(reLnkCtl2)[1])
	if m := reLnkCap2.FindStringSubmatch(text); m != nil {
		s.HasCap2 = true
		s.Cap2Low, s.Cap2High = atof(m[1]), atof(m[1])
		if m[2] != "" {
			s.Cap2High = atof(m[2])
		}
	}
	return s
}

// lspciASPM maps lspci's wording to ASPM.String.
func lspciASPM(s string) string {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "Enabled"))
	switch s {
	case "Disabled", "not supported":
		return "none"
	}
	return s
}

var lspciPortType = map[string]PortType{
	"Endpoint":        PortEndpoint,
	"Legacy Endpoint": PortLegacyEndpoint,
	"Root Port":       PortRootPort,
	"Upstream Port":   PortUpstream,
	"Downstream Port": PortDownstream,
}

// tree builds a sysfs snapshot in a temporary directory, laid out as the
// kernel does (docs/design.md §4).
type tree struct {
	t   testing.TB
	dir string
}

func newTree(t testing.TB) *tree { return &tree{t: t, dir: t.TempDir()} }

// add creates the function at the end of chain ("pci0000:00", "0000:00:1c.0",
// "0000:01:00.0") with the given attribute files and, unless nil, a config
// file; it links /sys/bus/pci/devices/ADDR to it.
func (tr *tree) add(chain []string, files map[string]string, config []byte) {
	tr.t.Helper()
	rel := "devices/" + strings.Join(chain, "/")
	out := map[string]string{
		"sys/bus/pci/devices/" + chain[len(chain)-1]: "->../../../" + rel,
	}
	for name, v := range files {
		out["sys/"+rel+"/"+name] = v + "\n"
	}
	if config != nil {
		if strings.HasPrefix(string(config), "->") {
			tr.t.Fatal("config bytes would read as a snaptest symlink")
		}
		out["sys/"+rel+"/config"] = string(config)
	}
	if len(out) == 1 { // no files: the function's directory must still exist
		if err := os.MkdirAll(filepath.Join(tr.dir, "sys", rel), 0o755); err != nil {
			tr.t.Fatal(err)
		}
	}
	snaptest.Add(tr.t, tr.dir, out)
}

// kspeed renders a speed as kernels since 4.17 print it ("8.0 GT/s PCIe").
func kspeed(v float64) string {
	if v == 2.5 {
		return "2.5 GT/s PCIe"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " GT/s PCIe"
}

// attrs returns the sysfs files of a function with the given IDs and link.
// The kernel derives the link files from the LnkCap/LnkSta registers.
func attrs(vendor, device string, class string, cur float64, curW int, max float64, maxW int) map[string]string {
	m := map[string]string{"vendor": vendor, "device": device, "class": class}
	if max > 0 {
		m["current_link_speed"] = kspeed(cur)
		m["current_link_width"] = strconv.Itoa(curW)
		m["max_link_speed"] = kspeed(max)
		m["max_link_width"] = strconv.Itoa(maxW)
	}
	return m
}

// attrsFromConfig derives the sysfs files from a decoded config, as the
// kernel does.
func attrsFromConfig(t testing.TB, b []byte) map[string]string {
	t.Helper()
	c, err := DecodeConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	x := c.Express
	id := func(v uint32, n int) string { return "0x" + strconv.FormatUint(uint64(v)|1<<(4*n), 16)[1:] }
	m := attrs(id(uint32(c.VendorID), 4), id(uint32(c.DeviceID), 4), id(c.Class, 6), 0, 0, 0, 0)
	if x != nil && x.HasLink {
		m = attrs(m["vendor"], m["device"], m["class"], x.LinkSpeed, x.LinkWidth, x.LinkCapSpeed, x.LinkCapWidth)
	}
	return m
}

// link makes the symlink name (relative to the tree's root) point to target.
func (tr *tree) link(name, target string) {
	tr.t.Helper()
	snaptest.Add(tr.t, tr.dir, map[string]string{name: "->" + target})
}

// portName is the name of a port type, "" for none.
func portName(p *PortType) string {
	if p == nil {
		return ""
	}
	return p.String()
}
