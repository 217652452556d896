package stack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// bed is a veth pair between two throwaway named network namespaces, A
// (10.N.0.1, interface va) and B (10.N.0.2, interface vb), for iperf3 runs
// on the real kernel. Names carry this process's pid and a counter, so
// that two test runs at once do not collide.
type bed struct {
	t            *testing.T
	A, B         string // namespace names
	AAddr, BAddr string
	VA, VB       string // interface names
	port         int
}

var bedSeq atomic.Int32

// newBed builds a bed, or skips without root, ip or iperf3.
func newBed(t *testing.T) *bed {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	for _, tool := range []string{"ip", "iperf3", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	n := int(bedSeq.Add(1))
	id := fmt.Sprintf("%d-%d", os.Getpid()%100000, n)
	net := 100 + (os.Getpid()+n)%150
	b := &bed{t: t, A: "stk-a-" + id, B: "stk-b-" + id, VA: "sva" + id, VB: "svb" + id,
		AAddr: fmt.Sprintf("10.%d.%d.1", net, n%250), BAddr: fmt.Sprintf("10.%d.%d.2", net, n%250),
		port: 20000 + (os.Getpid()*7+n)%20000}
	if len(b.VA) > 15 {
		b.VA, b.VB = b.VA[:15], b.VB[:15]
	}
	b.ip("netns", "add", b.A)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", b.A).Run() })
	b.ip("netns", "add", b.B)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", b.B).Run() })
	b.ip("-n", b.A, "link", "add", b.VA, "type", "veth", "peer", "name", b.VB, "netns", b.B)
	b.ip("-n", b.A, "addr", "add", b.AAddr+"/24", "dev", b.VA)
	b.ip("-n", b.B, "addr", "add", b.BAddr+"/24", "dev", b.VB)
	for _, ns := range []string{b.A, b.B} {
		b.ip("-n", ns, "link", "set", "lo", "up")
	}
	b.ip("-n", b.A, "link", "set", b.VA, "up")
	b.ip("-n", b.B, "link", "set", b.VB, "up")
	return b
}

// ip runs ip(8) and skips the test when it fails.
func (b *bed) ip(args ...string) {
	b.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		b.t.Skipf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// run runs a command in namespace ns and fails the test when it fails.
func (b *bed) run(ns string, args ...string) {
	b.t.Helper()
	if out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput(); err != nil {
		b.t.Fatalf("%s: %s: %v: %s", ns, strings.Join(args, " "), err, out)
	}
}

// path is the file of namespace ns.
func (b *bed) path(ns string) string { return "/run/netns/" + ns }

// server starts a one-shot iperf3 server in B with args and waits until it
// listens; it is ended when the test ends.
func (b *bed) server(args ...string) {
	b.t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", b.B, "iperf3", "-s", "-1", "-p", fmt.Sprint(b.port)}, args...)...)
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 200 {
		out, _ := exec.Command("ip", "netns", "exec", b.B, "ss", "-Hltn", fmt.Sprintf("sport = :%d", b.port)).Output()
		if len(strings.TrimSpace(string(out))) > 0 {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	b.t.Fatal("iperf3 server did not listen")
}

// client starts iperf3's client in A with args; the caller waits.
func (b *bed) client(args ...string) *exec.Cmd {
	b.t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", b.A, "iperf3", "-c", b.BAddr, "-p", fmt.Sprint(b.port)}, args...)...)
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// sampleWhile reads s every interval while cmd runs, and returns the
// samples.
func sampleWhile(t *testing.T, s *Sampler, cmd *exec.Cmd, interval time.Duration) []Sample {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var out []Sample
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Logf("%s: %v", cmd, err)
			}
			x, err := s.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return append(out, x)
		case <-tick.C:
			x, err := s.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, x)
		}
	}
}

// treeRun runs iperf3's server (in B, with serverArgs) and client (in A,
// with clientArgs) as one process tree, the run, sampling it every 250 ms
// with the process tree watched and the table scanned at each reading,
// and returns the run's Summary and the Aggregator.
func (b *bed) treeRun(clientArgs, serverArgs string, opts ...Option) (Summary, *Aggregator) {
	b.t.Helper()
	script := fmt.Sprintf(`ip netns exec %s iperf3 -s -1 -p %d %s >/dev/null &
i=0
until ip netns exec %s ss -Hltn "sport = :%d" | grep -q .; do
	i=$((i + 1)); [ $i -lt 200 ] || exit 9
	sleep 0.025
done
ip netns exec %s iperf3 -c %s -p %d -t 2 %s >/dev/null
rc=$?
wait
exit $rc`, b.B, b.port, serverArgs, b.B, b.port, b.A, b.BAddr, b.port, clientArgs)
	cmd := exec.Command("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s, err := NewSampler(context.Background(), append([]Option{WithProcessTree(cmd.Process.Pid), WithScanEvery(0)}, opts...)...)
	if err != nil {
		b.t.Fatal(err)
	}
	defer s.Close()
	a := NewAggregator()
	for _, x := range sampleWhile(b.t, s, cmd, 250*time.Millisecond) {
		a.Add(x)
	}
	return a.Summary(), a
}

// addrRun runs iperf3's server in B and client in A with clientArgs, not
// as the run: the sampler watches namespace A and its interface VA, and
// matches flows by VA's address.
func (b *bed) addrRun(clientArgs ...string) Summary {
	b.t.Helper()
	b.server()
	s, err := NewSampler(context.Background(), WithNetns(b.path(b.A)), WithInterfaces(b.VA))
	if err != nil {
		b.t.Fatal(err)
	}
	defer s.Close()
	a := NewAggregator()
	for _, x := range sampleWhile(b.t, s, b.client(append([]string{"-t", "2"}, clientArgs...)...), 250*time.Millisecond) {
		a.Add(x)
	}
	return a.Summary()
}
