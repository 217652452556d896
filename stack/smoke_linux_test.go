package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

func summarize(t *testing.T, xs []Sample) Summary {
	a := NewAggregator()
	for _, x := range xs {
		a.Add(x)
	}
	return a.Summary()
}

func TestSmoke(t *testing.T) {
	if os.Getenv("SMOKE") == "" {
		t.Skip()
	}
	b := newBed(t)
	switch os.Getenv("SMOKE") {
	case "tbf":
		b.run(b.A, "tc", "qdisc", "add", "dev", b.VA, "root", "tbf", "rate", "200mbit", "burst", "32kb", "latency", "50ms")
	case "rmem":
		b.run(b.B, "sysctl", "-w", "net.ipv4.tcp_rmem=4096 16384 65536")
	}
	var c *exec.Cmd
	var opts []Option
	if os.Getenv("TREE") != "" {
		c = exec.Command("sh", "-c", fmt.Sprintf("ip netns exec %s iperf3 -s -1 -p %d & sleep 0.5; ip netns exec %s iperf3 -c %s -p %d -t 3 %s; wait", b.B, b.port, b.A, b.BAddr, b.port, os.Getenv("ARGS")))
		c.Start()
		opts = append(opts, WithProcessTree(c.Process.Pid), WithScanEvery(0))
	} else {
		b.server()
		opts = append(opts, WithNetns(b.path(b.A)), WithNetns(b.path(b.B)), WithInterfaces(b.VA))
		c = b.client("-t", "3")
	}
	s, err := NewSampler(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	xs := sampleWhile(t, s, c, 250*time.Millisecond)
	sum := summarize(t, xs)
	if os.Getenv("CPUS") == "" {
		sum.CPUs = nil
	}
	j, _ := json.MarshalIndent(sum, "", " ")
	t.Logf("%s", j)
}
