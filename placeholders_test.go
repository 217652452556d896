package nicdiag

import (
	"context"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

// Each trap (a value that is not a measurement) next to its true positive:
// the trap gets no verdict at warn, the real limit keeps its verdict.
func TestPlaceholdersAreNotPhysics(t *testing.T) {
	type want struct {
		code    finding.Code
		subject string
		sev     finding.Severity
		text    string // in the summary
	}
	for _, tc := range []struct {
		tree  string
		want  []want         // findings that must be there
		never []finding.Code // codes that must not reach warn
	}{
		{tree: "i219-optiplex",
			never: []finding.Code{finding.PCIeBottleneck, finding.PCIeLinkDowngraded, finding.PCIeSlotLimited}},
		{tree: "x722-lewisburg",
			never: []finding.Code{finding.PCIeBottleneck, finding.PCIeLinkDowngraded, finding.PCIeSlotLimited}},
		{tree: "x722-lewisburg-uplink-x4",
			want:  []want{{finding.PCIeLinkDowngraded, "0000:b3:00.0", finding.Warn, "8 GT/s x4"}},
			never: []finding.Code{finding.PCIeSlotLimited}},
		{tree: "tb3-10g-enclosure",
			never: []finding.Code{finding.PCIeBottleneck, finding.PCIeLinkDowngraded, finding.PCIeSlotLimited}},
		{tree: "tb3-25g-enclosure",
			want: []want{{finding.PCIeBottleneck, "enp7s0f0np0", finding.Error, "Thunderbolt 3 PCIe tunnel"}}},
		{tree: "rtl8156-cdc-ncm",
			never: []finding.Code{finding.NICLinkBelowCapability}},
		{tree: "rtl8111-100m-half",
			want: []want{{finding.NICLinkBelowCapability, "enp7s0", finding.Warn, "half duplex"}}},
		{tree: "ccr2004-host",
			never: []finding.Code{finding.PCIeBottleneck, finding.PCIeLinkDowngraded}},
		{tree: "ccr2004-gen1-x1",
			want: []want{{finding.PCIeBottleneck, "enp1s0f0", finding.Warn, "known to move about 9400 Mb/s"},
				{finding.PCIeLinkDowngraded, "0000:01:00.0", finding.Warn, "2.5 GT/s x1"}}},
	} {
		t.Run(tc.tree, func(t *testing.T) {
			r, err := Check(context.Background(), option.Root(snaps+tc.tree))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				found := false
				for _, f := range r.Findings {
					if f.Code == w.code && f.Subject == w.subject {
						found = true
						if f.Severity != w.sev || !strings.Contains(f.Summary, w.text) {
							t.Errorf("%s: %s %q, want %s with %q", f.Code, f.Severity, f.Summary, w.sev, w.text)
						}
					}
				}
				if !found {
					t.Errorf("no %s on %s in %v", w.code, w.subject, r.Findings)
				}
			}
			for _, f := range r.Findings {
				for _, c := range tc.never {
					if f.Code == c && f.Severity >= finding.Warn {
						t.Errorf("trap judged: %s", f)
					}
				}
			}
		})
	}
}

// explain on a MAC inside the chipset and on NICs behind token links or a
// tunnel: the budget is what really bounds them, with the reason.
func TestPlaceholderBudgets(t *testing.T) {
	ctx := context.Background()
	b, err := Explain(ctx, "eno1", budget.Workload{}, option.Root(snaps+"i219-optiplex"))
	if err != nil || b.Bound != budget.BoundEthernet || !strings.Contains(b.NoPCIe, "integrated in the chipset") || b.CeilingMbps.Nominal < 980 || b.CeilingMbps.Nominal > 990 {
		t.Errorf("I219: %+v, %v; want an Ethernet-bound 987 Mb/s with the chipset named", b, err)
	}

	b, err = Explain(ctx, "eno1", budget.Workload{}, option.Root(snaps+"x722-lewisburg"))
	if err != nil || b.Bound != budget.BoundEthernet || b.LimitingHop != "0000:b2:00.0" || len(b.Model.Hops) != 1 {
		t.Fatalf("X722: %+v, %v; want Ethernet-bound with only the PCH uplink modelled", b, err)
	}
	if h := b.Hop("0000:b4:03.0"); h == nil || h.Verdict != pcie.VerdictArchitectural || !strings.Contains(h.Reason, "Lewisburg") {
		t.Errorf("the virtual switch port's token link: %+v", h)
	}

	b, err = Explain(ctx, "enp7s0", budget.Workload{}, option.Root(snaps+"tb3-10g-enclosure"))
	if err != nil || b.Bound != budget.BoundEthernet {
		t.Fatalf("10GbE in a TB3 enclosure: %+v, %v", b, err)
	}
	tun := b.Hop("0000:03:01.0")
	if tun == nil || tun.Tunnel == nil || tun.Tunnel.Class != "Thunderbolt 3" || tun.Tunnel.Gbps != 22 ||
		!strings.Contains(tun.Tunnel.Fabric, "0-1: generation 3, 2 × 20.0 Gb/s") {
		t.Errorf("the tunnel hop: %+v", tun)
	}
	for _, h := range b.Hops {
		if h.Tunnel == nil && h.Verdict == pcie.VerdictArchitectural {
			t.Errorf("a physical link beside the tunnel lost its verdict: %s → %s", h.Upstream.Address, h.Downstream.Address)
		}
	}

	b, err = Explain(ctx, "enp7s0f0np0", budget.Workload{Ports: 1}, option.Root(snaps+"tb3-25g-enclosure"))
	if err != nil || b.Bound != budget.BoundTunnel || b.LimitingHop != "0000:03:01.0" || b.CeilingMbps.Nominal > 22001 || b.CeilingMbps.Nominal < 21999 {
		t.Errorf("one 25GbE port in a TB3 enclosure: %+v, %v; want tunnel-bound at 22000 Mb/s", b, err)
	}
}
