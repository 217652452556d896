package lab

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// checkAER holds nicdiag's path ends against the guest kernel's AER
// statistics files (the "aer" section: ADDR cor=N nonfatal=N fatal=N).
// QEMU's pcie-root-port has the AER capability and the guest kernel (6.1)
// exposes aer_dev_*: every end of the e1000e's path that has the files
// must carry their totals in `show --json`'s pcie_path, and one without
// them none.
func checkAER(t *testing.T, secs map[string]Section, byFn map[string]NetFact) {
	kernel := map[string][3]uint64{}
	for _, l := range strings.Split(strings.TrimSpace(sec(t, secs, "aer").Stdout), "\n") {
		var addr string
		var v [3]uint64
		if _, err := fmt.Sscanf(l, "%s cor=%d nonfatal=%d fatal=%d", &addr, &v[0], &v[1], &v[2]); err == nil {
			kernel[addr] = v
		}
	}
	if _, ok := kernel["0000:00:10.0"]; !ok {
		t.Fatalf("guest kernel shows no AER statistics for the root port 0000:00:10.0: %q", sec(t, secs, "aer").Stdout)
	}
	type end struct {
		Address string `json:"address"`
		AER     *struct {
			Correctable uint64 `json:"correctable"`
			NonFatal    uint64 `json:"nonfatal"`
			Fatal       uint64 `json:"fatal"`
			Note        string `json:"note"`
		} `json:"aer"`
	}
	var doc struct {
		Path struct {
			Hops []struct{ Upstream, Downstream end } `json:"hops"`
		} `json:"pcie_path"`
	}
	s := sec(t, secs, "show-"+byFn["0000:01:00.0"].Name)
	if err := json.Unmarshal([]byte(s.Stdout), &doc); err != nil {
		t.Fatalf("show --json: %v", err)
	}
	if len(doc.Path.Hops) == 0 {
		t.Fatal("e1000e: no hops in pcie_path")
	}
	for _, h := range doc.Path.Hops {
		for _, e := range []end{h.Upstream, h.Downstream} {
			k, ok := kernel[e.Address]
			switch {
			case ok && e.AER == nil:
				t.Errorf("%s: the kernel counts %v, nicdiag read no aer", e.Address, k)
			case !ok && e.AER != nil:
				t.Errorf("%s: no AER files, yet aer %+v", e.Address, *e.AER)
			case ok && ([3]uint64{e.AER.Correctable, e.AER.NonFatal, e.AER.Fatal} != k || e.AER.Note != ""):
				t.Errorf("%s: aer %+v, kernel %v", e.Address, *e.AER, k)
			case ok:
				t.Logf("%s: AER since boot cor=%d nonfatal=%d fatal=%d (kernel and nicdiag agree)", e.Address, k[0], k[1], k[2])
			}
		}
	}
}
