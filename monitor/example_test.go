package monitor_test

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// A harness samples for a fixed time while it generates its own load,
// then reads the verdict; Wait ends the run when the duration has passed,
// with no Next loop. Here the host is a bundled snapshot, so that the
// example runs anywhere and without root: its counters never move, every
// rate is 0 and there is no verdict. On a live host leave option.Root out,
// and start from the inspected host (nicdiag's Host.Monitor), whose
// ceilings the verdict weighs.
func ExampleRun_Wait() {
	ctx := context.Background()
	root := option.Root("../testdata/snapshots/82576-minipcie-x1")
	nics, err := nicinfo.List(ctx, root)
	if err != nil {
		fmt.Println(err)
		return
	}
	run, err := monitor.Start(ctx, monitor.NICs(nics...), root,
		monitor.WithInterval(20*time.Millisecond), monitor.WithDuration(150*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	// ... the load generator runs here ...
	res, err := run.Wait(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sampled:", res.Summary.Samples > 0)
	for _, n := range res.Summary.NICs {
		fmt.Printf("%s: %.0f Mb/s received\n", n.Name, n.RXBytesPerS*8/1e6)
	}
	fmt.Println("verdict:", res.Verdict.Bound)
	// Output:
	// sampled: true
	// enp1s0f0: 0 Mb/s received
	// enp1s0f1: 0 Mb/s received
	// verdict: unknown
}

// Sample while a command runs: the run ends when it exits, with its status.
func ExampleWithCommand() {
	ctx := context.Background()
	cmd := exec.Command("sh", "-c", "sleep 0.1; exit 3")
	run, err := monitor.Start(ctx, nil, monitor.WithCommand(cmd),
		option.Root("../testdata/snapshots/82576-minipcie-x1"), monitor.WithInterval(20*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := run.Wait(ctx) // until the command has exited

	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Command.Argv[0], "exited with status", res.Command.ExitCode)
	// Output:
	// sh exited with status 3
}

// Judge a run from samples of a harness's own: one gigabit port receiving
// near line rate with idle cores is bound by Ethernet.
func ExampleJudge() {
	limits := []monitor.Limits{{NIC: "eth0", PortMbps: 1000}}
	var samples []irq.Sample
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= 5; i++ {
		samples = append(samples, irq.Sample{Time: t0.Add(time.Duration(i) * time.Second), IntervalS: 1,
			CPUs: []irq.CPURate{{CPU: 0, BusyPct: 12, SoftIRQPct: 9}},
			NICs: []irq.NICRate{{Name: "eth0", RXPacketsPerS: 81000, RXBytesPerS: 81000 * 1514}}})
	}
	v := monitor.Judge(samples, limits)
	fmt.Printf("%s: %.0f of %.0f Mb/s (%.0f %%)\n", v.Bound, v.AchievedMbps, *v.CeilingMbps, *v.Share*100)
	// Output: ethernet: 984 of 987 Mb/s (100 %)
}
