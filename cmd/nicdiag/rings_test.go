package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"
)

// The real kernel's "no answer" path: veth has no ETHTOOL_GRINGPARAM (Linux
// 6.18), so `show --json` in a throwaway namespace has no rings and names
// the refusal in missing, and `check` makes no nic.ring_* finding of it.
// The live Inspect still reads the veth's sysfs statistics: a snapshot
// taken there carries the refusal in ethtool/tv0.json.
func TestRingsVethNoAnswer(t *testing.T) {
	ns, ip := throwawayNetns(t, "nicdiag-rings")
	bin := binary(t)
	ip("-n", ns, "link", "add", "tv0", "type", "veth", "peer", "name", "tv1")
	ip("-n", ns, "link", "set", "tv0", "up")
	ip("-n", ns, "link", "set", "tv1", "up")
	in := func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command("ip", append([]string{"netns", "exec", ns, bin}, args...)...).Output()
		if e, ok := err.(*exec.ExitError); ok && e.ExitCode() < 3 {
			err = nil // check exits 1 or 2 for its findings
		}
		if err != nil {
			t.Fatalf("nicdiag %v in %s: %v", args, ns, err)
		}
		return out
	}
	var show struct {
		NIC struct {
			Driver  string          `json:"driver"`
			Rings   json.RawMessage `json:"rings"`
			Missing []string        `json:"missing"`
		} `json:"nic"`
	}
	if err := json.Unmarshal(in("--json", "show", "tv0"), &show); err != nil {
		t.Fatal(err)
	}
	if show.NIC.Driver != "veth" || show.NIC.Rings != nil || !slices.Contains(show.NIC.Missing, "ethtool.rings: operation not supported") {
		t.Errorf("show tv0: driver %q rings %s missing %q", show.NIC.Driver, show.NIC.Rings, show.NIC.Missing)
	}
	var check struct {
		Findings []struct {
			Code    string `json:"code"`
			Subject string `json:"subject"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(in("--json", "check", "tv0"), &check); err != nil {
		t.Fatal(err)
	}
	for _, f := range check.Findings {
		if f.Code == "nic.ring_drops" || f.Code == "nic.ring_small" || (f.Code == "nicdiag.incomplete" && f.Subject == "tv0") {
			t.Errorf("check tv0: %+v", f)
		}
	}
	dir := t.TempDir()
	in("snapshot", "-o", dir+"/snap")
	b, err := os.ReadFile(dir + "/snap/ethtool/tv0.json")
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Rings  json.RawMessage   `json:"rings"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(b, &a); err != nil || a.Rings != nil || a.Errors["rings"] != "operation not supported" {
		t.Errorf("ethtool/tv0.json: %s (%v)", b, err)
	}
}
