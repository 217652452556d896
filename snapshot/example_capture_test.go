package snapshot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/snapshot"
)

// Capture a tree (here another snapshot; by default the live host) and read
// it back with nicinfo.
func ExampleCapture() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	m, err := snapshot.Capture(ctx, filepath.Join(dir, "snap"), snapshot.FromRoot("../testdata/snapshots/virtio-kvm"))
	if err != nil {
		fmt.Println(err)
		return
	}
	nics, _ := nicinfo.List(ctx, option.Root(filepath.Join(dir, "snap")))
	fmt.Println(m.Interfaces, nics[0].PCI.Address, nics[0].Driver)
	// Output: [eth0] 0000:01:00.0 virtio_net
}
