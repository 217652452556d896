package nicdiag

import (
	"context"
	"errors"
	"testing"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/option"
)

// More ports than share a NIC's path would add ports of other cards,
// unhindered by this path, to its ceiling: 5 "ports" on the dual 82576
// read 3588 Mb/s, above the 1435 Mb/s its x1 link carries for its 2.
func TestExplainRejectsMorePortsThanThePathHas(t *testing.T) {
	_, err := Explain(context.Background(), "enp1s0f0", budget.Workload{Ports: 5}, option.Root(snaps+"82576-minipcie-x1"))
	if !errors.Is(err, budget.ErrInvalidWorkload) {
		t.Fatalf("5 ports on a 2-port path: err = %v, want ErrInvalidWorkload", err)
	}
	if _, err := Explain(context.Background(), "enp1s0f0", budget.Workload{Ports: 2}, option.Root(snaps+"82576-minipcie-x1")); err != nil {
		t.Fatalf("2 ports: %v", err)
	}
}

// A PCI address names the interface of a function that has one.
func TestExplainAndCheckTakePCIAddressOfInterface(t *testing.T) {
	root := option.Root(snaps + "82576-minipcie-x1")
	for _, addr := range []string{"0000:01:00.0", "01:00.0"} {
		b, err := Explain(context.Background(), addr, budget.Workload{}, root)
		if err != nil || b.Interface != "enp1s0f0" {
			t.Fatalf("Explain(%s) = %v, %v; want enp1s0f0's budget", addr, b, err)
		}
	}
	r, err := Check(context.Background(), root, WithInterfaces("0000:01:00.1", "enp1s0f1", "enp1s0f1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Interfaces(); len(got) != 1 || got[0] != "enp1s0f1" {
		t.Errorf("checked %v, want enp1s0f1 once", got)
	}
}
