package lab

import (
	"strings"
	"testing"
)

// checkAudit: the host audit on the links guest's real kernel (Debian's
// 6.1): the vmxnet3's RX ring of 64 is nic.ring_small at its nominal
// speed; the VXLAN device vx0 (kind from rtnetlink, MTU 1500 over NICs of
// 1500) is nic.tunnel_offload at warn, and show reads its VNI and port;
// br_netfilter with a bridge is stack.br_netfilter; the conntrack table of
// 64 entries that tc's ct action filled is stack.conntrack_full at warn,
// with the kernel's count.
func checkAudit(t *testing.T, secs map[string]Section) {
	if m := sec(t, secs, "audit-mods"); strings.TrimSpace(m.Stdout) != "ok" {
		t.Fatalf("the guest lacks the host audit's modules (%s), though its stamp matches build.sh", strings.TrimSpace(m.Stdout))
	}
	var c checkDoc
	nicdiagJSON(t, sec(t, secs, "audit-check"), &c)
	if f := c.finding("nic.ring_small", "eth2"); f == nil || f.Evidence["rx_ring"] != "64" || !strings.Contains(f.Summary, "nominal speed") {
		t.Errorf("vmxnet3 ring 64: %+v\nethtool -g: %s", f, sec(t, secs, "audit-ring").Stdout)
	}
	if f := c.finding("nic.tunnel_offload", "vx0"); f == nil || f.Severity != "warn" || !strings.Contains(f.Summary, "its MTU of 1500 needs 1550") {
		t.Errorf("vxlan: %+v\n%s", f, sec(t, secs, "audit-vxlan").Stdout)
	} else {
		t.Logf("vx0: %s", f.Summary)
	}
	var show struct {
		NIC struct {
			Kind   string `json:"kind"`
			Tunnel *struct {
				Kind string `json:"kind"`
				VNI  int    `json:"vni"`
				Port int    `json:"port"`
			} `json:"tunnel"`
		} `json:"nic"`
	}
	nicdiagJSON(t, sec(t, secs, "audit-show-vx0"), &show)
	if tu := show.NIC.Tunnel; tu == nil || tu.Kind != "vxlan" || tu.VNI != 42 || tu.Port != 4789 || show.NIC.Kind != "vxlan" {
		t.Errorf("show vx0: %+v", show.NIC)
	}
	if f := c.finding("stack.br_netfilter", "host"); f == nil || !strings.Contains(f.Summary, "br0") {
		t.Errorf("br_netfilter: %+v", f)
	}
	ct := strings.Fields(sec(t, secs, "audit-ct").Stdout)
	f := c.finding("stack.conntrack_full", "host")
	if len(ct) != 2 || f == nil || f.Severity != "warn" || f.Evidence["max"] != ct[1] {
		t.Errorf("conntrack %v: %+v\n%s", ct, f, sec(t, secs, "audit-ctstat").Stdout)
	} else {
		t.Logf("conntrack: %s\n/proc/net/stat/nf_conntrack:\n%s", f.Summary, sec(t, secs, "audit-ctstat").Stdout)
	}
}
