package monitor_test

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// A benchmark harness samples while it generates its own load, then reads
// the verdict. Here the host is a bundled snapshot, so that the example
// runs anywhere and without root: its counters never move, every rate is 0
// and there is no verdict. On a real host drop both WithRoot options.
func Example() {
	ctx := context.Background()
	root := "../testdata/snapshots/82576-minipcie-x1"
	nics, err := nicinfo.List(ctx, nicinfo.WithRoot(root))
	if err != nil {
		fmt.Println(err)
		return
	}
	run, err := monitor.Start(ctx, nics, monitor.WithRoot(root), monitor.WithInterval(20*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	time.Sleep(150 * time.Millisecond) // the load generator runs here
	res, err := run.Stop()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sampled:", res.Summary.Samples > 0)
	for _, n := range res.Summary.NICs {
		fmt.Printf("%s: %.0f Mb/s received\n", n.Name, n.RXBytesPerS*8/1e6)
	}
	fmt.Println("findings:", len(res.Summary.Findings))
	// Output:
	// sampled: true
	// enp1s0f0: 0 Mb/s received
	// enp1s0f1: 0 Mb/s received
	// findings: 0
}

// Sample while a command runs: the run ends when it exits, with its status.
func ExampleWithCommand() {
	ctx := context.Background()
	cmd := exec.Command("sh", "-c", "sleep 0.1; exit 3")
	run, err := monitor.Start(ctx, nil, monitor.WithCommand(cmd),
		monitor.WithRoot("../testdata/snapshots/82576-minipcie-x1"), monitor.WithInterval(20*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		if _, err := run.Next(ctx); err != nil { // monitor.ErrDone when the command has exited
			break
		}
	}
	res, err := run.Stop()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Command.Argv[0], "exited with status", res.Command.ExitCode)
	// Output:
	// sh exited with status 3
}
