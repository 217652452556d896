package nicdiag

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
)

// healthFindings inspects dir and returns the pcie-health findings.
func healthFindings(t *testing.T, dir string) (*Host, []finding.Finding) {
	t.Helper()
	h, err := Inspect(context.Background(), option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	return h, h.Check(pcieHealthCheck)
}

// withCode returns the findings of code c.
func withCode(fs []finding.Finding, c finding.Code) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.Code == c {
			out = append(out, f)
		}
	}
	return out
}

// setMPS rewrites DevCtl's Max Payload Size (bits 7:5) in the config space
// of the function at addr in the snapshot dir.
func setMPS(t *testing.T, dir, addr string, mps int) { setPayloadField(t, dir, addr, 8, 5, mps) }

// setMPSSupported rewrites DevCap's Max Payload Size Supported (bits 2:0).
func setMPSSupported(t *testing.T, dir, addr string, mps int) {
	setPayloadField(t, dir, addr, 4, 0, mps)
}

// setPayloadField writes the 3-bit payload-size code for mps at bit shift
// of the register at reg in the PCI Express capability (ID 0x10, found in
// the capability list) of the function at addr.
func setPayloadField(t *testing.T, dir, addr string, reg, shift, mps int) {
	t.Helper()
	p, err := filepath.EvalSymlinks(filepath.Join(dir, "sys/bus/pci/devices", addr, "config"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	off := int(b[0x34]) &^ 3
	for n := 0; off >= 0x40 && off+12 <= len(b) && n < 48; n++ {
		if b[off] == 0x10 {
			code := 0
			for 128<<code < mps {
				code++
			}
			v := int(b[off+reg]) | int(b[off+reg+1])<<8
			v = v&^(7<<shift) | code<<shift
			b[off+reg], b[off+reg+1] = byte(v), byte(v>>8)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		off = int(b[off+1]) &^ 3
	}
	t.Fatalf("%s: no PCI Express capability", addr)
}

// TestMPSLow: the CCR2004's Gen1 x1 link is PCIe-bound (1.6 of 9.3 Gb/s)
// and both its ends support MPS 256, as DevCtl sets it. The root port
// set back to 128 (what a BIOS with "MPS auto" often leaves) drops the
// path to 128: solved again at 256 the ceiling rises by more than 5 %, so
// each port gets pcie.mps_low. The same change on the CCR2004 host tree,
// where the 10G ports are Ethernet-bound, costs nothing and says nothing;
// the trees as published say nothing either.
func TestMPSLow(t *testing.T) {
	for _, snap := range []string{"ccr2004-gen1-x1", "ccr2004-host"} {
		if _, fs := healthFindings(t, snaps+snap); len(withCode(fs, finding.PCIeMPSLow)) != 0 {
			t.Errorf("%s as published: %v", snap, fs)
		}
	}
	dir := snaptest.Copy(t, snaps+"ccr2004-gen1-x1")
	h, _ := healthFindings(t, dir)
	n, err := h.Lookup("enp1s0f0")
	if err != nil {
		t.Fatal(err)
	}
	port := string(n.Path.Hops[0].Upstream.Address)
	setMPS(t, dir, port, 128)
	h, fs := healthFindings(t, dir)
	got := withCode(fs, finding.PCIeMPSLow)
	if len(got) != 4 {
		t.Fatalf("want one pcie.mps_low per port, got %v", got)
	}
	f := got[0]
	if f.Severity != finding.Warn || f.Evidence["mps"] != "128" || f.Evidence["path_max_payload"] != "256" ||
		!strings.Contains(f.Fix, "pci=pcie_bus_perf") || !strings.Contains(f.Fix, "setpci") {
		t.Errorf("%+v", f)
	}
	n, _ = h.Lookup(f.Subject)
	if n.Budget.Model.MPS != 128 || f.CapacityMbps == nil || *f.CapacityMbps != round1(n.Budget.CeilingMbps.Nominal) {
		t.Errorf("model MPS %d, capacity %v vs %v", n.Budget.Model.MPS, f.CapacityMbps, n.Budget.CeilingMbps.Nominal)
	}
	t.Logf("%s: %s; with pci=pcie_bus_perf %s", f.Subject, f.Summary, f.Evidence["ceiling_pcie_bus_perf"])
	if !strings.HasSuffix(f.Evidence["ceiling_pcie_bus_perf"], "(MPS and MRRS 256)") {
		t.Errorf("ceiling_pcie_bus_perf %q", f.Evidence["ceiling_pcie_bus_perf"])
	}

	// Every end able to take 512 while the path runs at 256: a 1518-byte
	// frame is 6 TLPs at 256 and 3 at 512, and the ceiling rises by 5.2 %,
	// just over the threshold. Every end able to take 1024 while the path
	// runs at 512: the gain (about 2.5 %) is under it, nothing is said.
	for _, tc := range []struct {
		mps, supported int
		want           bool
	}{{256, 512, true}, {512, 1024, false}} {
		dir := snaptest.Copy(t, snaps+"ccr2004-gen1-x1")
		h, _ = healthFindings(t, dir)
		n, _ = h.Lookup("enp1s0f0")
		ends := []string{"0000:01:00.1", "0000:01:00.2", "0000:01:00.3"}
		for _, hop := range n.Path.Hops {
			ends = append(ends, string(hop.Upstream.Address), string(hop.Downstream.Address))
		}
		for _, e := range ends {
			setMPSSupported(t, dir, e, tc.supported)
			setMPS(t, dir, e, tc.mps)
		}
		h, fs = healthFindings(t, dir)
		n, _ = h.Lookup("enp1s0f0")
		if m, _, ok := pathMaxPayload(n.Path); !ok || m != tc.supported || n.Budget.Model.MPS != tc.mps {
			t.Fatalf("path max %d (%v), MPS %d", m, ok, n.Budget.Model.MPS)
		}
		got := withCode(fs, finding.PCIeMPSLow)
		if (len(got) == 4) != tc.want || len(got) != 0 && len(got) != 4 {
			t.Errorf("MPS %d of %d: %v", tc.mps, tc.supported, got)
		}
		for _, f := range got {
			t.Logf("MPS %d of %d: %s -> %s", tc.mps, tc.supported, f.Evidence["ceiling_mbps"], f.Evidence["ceiling_at_path_max"])
		}
	}

	host := snaptest.Copy(t, snaps+"ccr2004-host")
	h, _ = healthFindings(t, host)
	n, _ = h.Lookup("enp1s0f0")
	setMPS(t, host, string(n.Path.Hops[0].Upstream.Address), 128)
	h, fs = healthFindings(t, host)
	n, _ = h.Lookup("enp1s0f0")
	if n.Budget.Model.MPS != 128 {
		t.Fatalf("host tree: MPS %d after the change", n.Budget.Model.MPS)
	}
	if got := withCode(fs, finding.PCIeMPSLow); len(got) != 0 {
		t.Errorf("Ethernet-bound at MPS 128, yet %v", got)
	}
}

// TestAERErrors adds the kernel's AER statistics files (the layout of
// drivers/pci/pcie/aer.c; the counts are made up) to the CCR2004's path:
// 150 correctable errors on the NIC function (info), a non-fatal one on the
// root port (warn), 5 correctable on another function (under the threshold:
// nothing), and a damaged file (read around, named in the evidence).
func TestAERErrors(t *testing.T) {
	dir := snaptest.Copy(t, snaps+"ccr2004-gen1-x1")
	h, fs := healthFindings(t, dir)
	if got := withCode(fs, finding.PCIeAERErrors); len(got) != 0 {
		t.Fatalf("tree without AER files: %v", got)
	}
	n, _ := h.Lookup("enp1s0f0")
	port, dev := n.Path.Hops[0].Upstream.Address, n.Path.Hops[0].Downstream.Address
	cor := func(rx, bad int) string {
		return "RxErr " + strconv.Itoa(rx) + "\nBadTLP " + strconv.Itoa(bad) + "\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR " + strconv.Itoa(rx+bad) + "\n"
	}
	unc := func(dlp int, total string) string {
		return "Undefined 0\nDLP " + strconv.Itoa(dlp) + "\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\n" + total + " " + strconv.Itoa(dlp) + "\n"
	}
	d := func(a any, f string) string { return "sys/bus/pci/devices/" + fmt.Sprint(a) + "/" + f }
	other := "0000:01:00.1"
	write := func(p, s string) {
		real, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.Dir(p)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(real, filepath.Base(p)), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(d(dev, "aer_dev_correctable"), cor(120, 30))
	write(d(dev, "aer_dev_nonfatal"), unc(0, "TOTAL_ERR_NONFATAL"))
	write(d(dev, "aer_dev_fatal"), unc(0, "TOTAL_ERR_FATAL"))
	write(d(port, "aer_dev_correctable"), cor(2, 0))
	write(d(port, "aer_dev_nonfatal"), unc(1, "TOTAL_ERR_NONFATAL"))
	write(d(port, "aer_dev_fatal"), "garbage here\n")
	write(d(other, "aer_dev_correctable"), cor(5, 0))

	h, fs = healthFindings(t, dir)
	got := withCode(fs, finding.PCIeAERErrors)
	by := map[string]finding.Finding{}
	for _, f := range got {
		by[f.Subject] = f
	}
	if len(got) != 2 {
		t.Fatalf("want the NIC function and the port, got %v", got)
	}
	if f := by[string(dev)]; f.Severity != finding.Info || f.Evidence["correctable"] != "150" || f.Evidence["types"] != "BadTLP 30, RxErr 120" {
		t.Errorf("device: %+v", f)
	}
	if f := by[string(port)]; f.Severity != finding.Warn || f.Evidence["nonfatal"] != "1" || f.Evidence["types"] != "RxErr 2, nonfatal:DLP 1" ||
		!strings.Contains(f.Evidence["note"], "aer_dev_fatal") || !strings.Contains(f.Evidence["since"], "boot") {
		t.Errorf("port: %+v", f)
	}
	n, _ = h.Lookup("enp1s0f0")
	if a := n.Path.Hops[0].Downstream.AER; a == nil || a.Correctable != 150 || a.Note != "" {
		t.Errorf("End.AER %+v", a)
	}
}

// TestIOMMUTranslated gives the ConnectX-3 Pro (40 Gb/s) and the X722
// (10 Gb/s) an IOMMU group as the kernel lays it out (iommu_group ->
// ../../../../kernel/iommu_groups/N, whose type file names the default
// domain): translated DMA on the 40G port is info, on the 10G one nothing,
// and an identity domain (iommu=pt) nothing.
func TestIOMMUTranslated(t *testing.T) {
	for _, tc := range []struct {
		snap, iface, typ string
		want             bool
	}{
		{"connectx3pro-haswell", "enp3s0", "DMA-FQ", true},
		{"connectx3pro-haswell", "enp3s0", "DMA", true},
		{"connectx3pro-haswell", "enp3s0", "identity", false},
		{"x722-lewisburg", "eno1", "DMA", false},
	} {
		dir := snaptest.Copy(t, snaps+tc.snap)
		h, fs := healthFindings(t, dir)
		if len(withCode(fs, finding.PCIeIOMMUTranslated)) != 0 {
			t.Fatalf("%s without an IOMMU: %v", tc.snap, fs)
		}
		n, _ := h.Lookup(tc.iface)
		real, err := filepath.EvalSymlinks(filepath.Join(dir, "sys/bus/pci/devices", string(n.PCI.Address)))
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(real, filepath.Join(dir, "sys/kernel/iommu_groups/17"))
		snaptest.Add(t, dir, map[string]string{"sys/kernel/iommu_groups/17/type": tc.typ + "\n"})
		if err := os.Symlink(rel, filepath.Join(real, "iommu_group")); err != nil {
			t.Fatal(err)
		}
		h, fs = healthFindings(t, dir)
		n, _ = h.Lookup(tc.iface)
		if n.IOMMUDomain != tc.typ || n.IOMMUGroup != "17" {
			t.Errorf("%s: domain %q group %q", tc.snap, n.IOMMUDomain, n.IOMMUGroup)
		}
		got := withCode(fs, finding.PCIeIOMMUTranslated)
		if (len(got) == 1) != tc.want || len(got) > 1 {
			t.Errorf("%s %s: %v", tc.snap, tc.typ, got)
			continue
		}
		if tc.want && (got[0].Severity != finding.Info || got[0].Evidence["iommu_domain"] != tc.typ || !strings.Contains(got[0].Fix, "iommu=pt")) {
			t.Errorf("%+v", got[0])
		}
	}
}

// TestPCIeHealthLive inspects this machine: whatever its IOMMU and AER
// files hold, IOMMUDomain is the group's type file, each End.AER matches
// the presence of the files, and the check runs.
func TestPCIeHealthLive(t *testing.T) {
	if _, err := os.Stat("/sys/bus/pci/devices"); err != nil {
		t.Skip("no PCI sysfs")
	}
	h, err := Inspect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_ = h.Check(pcieHealthCheck)
	for _, n := range h.Selected {
		if n.PCI == nil {
			continue
		}
		b, err := os.ReadFile("/sys/bus/pci/devices/" + string(n.PCI.Address) + "/iommu_group/type")
		if want := strings.TrimSpace(string(b)); err == nil && n.IOMMUDomain != want || err != nil && n.IOMMUDomain != "" {
			t.Errorf("%s: IOMMUDomain %q, file %q (%v)", n.ID(), n.IOMMUDomain, want, err)
		}
		t.Logf("%s: iommu %q", n.ID(), n.IOMMUDomain)
		if n.Path == nil {
			continue
		}
		for _, hop := range n.Path.Hops {
			_, err := os.Stat("/sys/bus/pci/devices/" + string(hop.Downstream.Address) + "/aer_dev_correctable")
			if (err == nil) != (hop.Downstream.AER != nil) {
				t.Errorf("%s: AER %+v, file %v", hop.Downstream.Address, hop.Downstream.AER, err)
			}
		}
	}
}
