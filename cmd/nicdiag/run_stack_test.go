package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/monitor"
)

// The run verdict on this host's own stack, on the real kernel: iperf3
// over a veth pair into a throwaway namespace under `nicdiag monitor`
// (iperfBed). What each test asserts holds whatever else the machine
// runs: a shaper's rate, a window's size and a socket's buffer bind the
// run however loaded the CPUs are, and a rate-limited run stays far below
// what a loaded CPU moves. Assertions about the CPUs being the bound are
// made only where the test makes them the bound (TestRunVerdictOtherWork,
// alone).

// monitorRun runs `nicdiag monitor --json --interval 250ms ARGS -- CMD`
// (in-process) and returns the verdict of its summary line and what the
// command wrote (its stdout goes to stderr under --json).
func monitorRun(t *testing.T, args []string, cmd []string) (monitor.Verdict, []finding.Finding, string) {
	t.Helper()
	argv := append(append([]string{"monitor", "--json", "--interval", "250ms"}, args...), "--")
	var out, errb bytes.Buffer
	code := run(context.Background(), append(argv, cmd...), &out, &errb)
	if code == exitFail {
		t.Fatalf("nicdiag monitor exited %d: %s", code, errb.String())
	}
	return summaryOf(t, out.Bytes(), errb.String())
}

// summaryOf decodes monitor --json's summary line.
func summaryOf(t *testing.T, out []byte, cmdOut string) (monitor.Verdict, []finding.Finding, string) {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	var sum struct {
		Type     string            `json:"type"`
		Verdict  monitor.Verdict   `json:"verdict"`
		Findings []finding.Finding `json:"findings"`
	}
	if err := json.Unmarshal(lines[len(lines)-1], &sum); err != nil || sum.Type != "summary" {
		t.Fatalf("monitor --json: %v: %.2000s", err, out)
	}
	v := sum.Verdict
	t.Logf("verdict %s: %s", v.Bound, v.Summary)
	if v.Stack != nil {
		t.Logf("stack layers %+v", v.Stack.Layers)
	}
	return v, sum.Findings, cmdOut
}

// warnings are the run's findings at warn or worse (not those of the
// queue and IRQ checks made before the run, which are the host's), but
// other work: on a loaded machine the other processes are real, and the
// run's threads wait for the CPU.
func warnings(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		if f.Severity >= finding.Warn && strings.HasPrefix(string(f.Code), "run.") && f.Code != finding.RunOtherWork {
			out = append(out, f.String())
		}
	}
	return out
}

// healthy fails unless v is what a run that nothing in this host bound
// gets: outside_host, or, on a machine busy with other tests, other work
// that is not the run's (named, with the run's own work small), and no
// warning but other work's.
func healthy(t *testing.T, v monitor.Verdict, fs []finding.Finding) {
	t.Helper()
	switch {
	case v.Bound == monitor.BoundOutside:
	case v.Bound == monitor.BoundOtherWork && v.Cause != nil && strings.Contains(v.Summary, "(PID "):
		t.Logf("the machine is busy: %s", v.Summary)
	default:
		t.Errorf("bound %s, want outside_host (or other work on a busy machine): %s", v.Bound, v.Summary)
	}
	if w := warnings(fs); len(w) > 0 {
		t.Errorf("a healthy run warns: %v", w)
	}
}

// A 200 Mb/s tbf on the host's end of the veth shapes the run: the
// verdict is the qdisc, with the shaper's rate as the ceiling and its fix,
// not outside_host. A 50 Mb/s run through a 1 Gb/s tbf is not bound by
// it: outside_host, nothing at warn.
func TestRunVerdictShaper(t *testing.T) {
	b := newIperfBed(t)
	tc := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("tc", args...).CombinedOutput(); err != nil {
			t.Skipf("tc %v: %v: %s", args, err, out)
		}
	}
	tc("qdisc", "add", "dev", b.Host, "root", "tbf", "rate", "200mbit", "burst", "64kb", "latency", "50ms")
	v, _, _ := monitorRun(t, []string{b.Host}, b.command("-t", "2"))
	if v.Bound != monitor.BoundQdisc || v.Limit == nil || !strings.Contains(v.Limit.What, "tbf") || !strings.Contains(v.Limit.What, "200 Mb/s") {
		t.Fatalf("bound %s, limit %+v, want the tbf: %s", v.Bound, v.Limit, v.Summary)
	}
	if f := verdictFinding(v, finding.RunQdiscBound); f == nil || !strings.Contains(f.Fix, "tc qdisc change dev "+b.Host+" root tbf rate 400mbit") {
		t.Errorf("qdisc finding %+v", f)
	}
	tc("qdisc", "replace", "dev", b.Host, "root", "tbf", "rate", "1gbit", "burst", "256kb", "latency", "50ms")
	v, fs, _ := monitorRun(t, []string{b.Host}, b.command("-t", "2", "-b", "50M", "--fq-rate", "50M"))
	healthy(t, v, fs)
	if v.Bound == monitor.BoundQdisc || layerState(v, "qdisc") != "room" {
		t.Errorf("50 Mb/s through a 1 Gb/s tbf: the qdisc %s: %s", layerState(v, "qdisc"), v.Summary)
	}
}

// The server's namespace with net.ipv4.tcp_rmem's max at 64 KiB: the
// sender waits on the receive window, and the receiving socket is this
// host's (the command runs both ends): the verdict is the transport,
// naming tcp_rmem with its value, and the fix raises it there. With the
// namespace's default (6 MiB) the window does not bind.
func TestRunVerdictReceiveWindow(t *testing.T) {
	b := newIperfBed(t)
	if out, err := exec.Command("ip", "netns", "exec", b.NS, "sysctl", "-qw", "net.ipv4.tcp_rmem=4096 16384 65536").CombinedOutput(); err != nil {
		t.Skipf("sysctl in the namespace: %v: %s", err, out)
	}
	v, _, _ := monitorRun(t, []string{b.Host}, b.command("-t", "2"))
	if v.Bound != monitor.BoundTransport || v.Cause == nil || v.Cause.Kind != "local_window" {
		t.Fatalf("bound %s (cause %+v), want this host's window: %s", v.Bound, v.Cause, v.Summary)
	}
	if !strings.Contains(v.Summary, "net.ipv4.tcp_rmem's max, 64 KiB") || !strings.Contains(v.Summary, "in flight") {
		t.Errorf("the sentence names neither tcp_rmem's 64 KiB nor the bytes in flight: %s", v.Summary)
	}
	if f := verdictFinding(v, finding.RunWindowBound); f == nil || !strings.Contains(f.Fix, "net.ipv4.tcp_rmem='4096 131072 262144'") {
		t.Errorf("window finding %+v", f)
	}

	roomy := newIperfBed(t)
	v, fs, _ := monitorRun(t, []string{roomy.Host}, roomy.command("-t", "2", "-b", "200M", "--fq-rate", "200M"))
	healthy(t, v, fs)
	if st := layerState(v, "transport"); st != "room" {
		t.Errorf("the default tcp_rmem at 200 Mb/s: transport %s: %s", st, v.Summary)
	}
}

// UDP at 2 Gb/s into a 16 KiB receive buffer (iperf3 -w sets both ends):
// the receiving socket drops datagrams; the verdict is the socket layer,
// in throughput terms, with SO_RCVBUF and rmem_max in the fix. At
// 20 Mb/s into 4 MiB nothing drops.
func TestRunVerdictSocketDrops(t *testing.T) {
	b := newIperfBed(t)
	v, _, _ := monitorRun(t, []string{b.Host}, b.command("-t", "2", "-u", "-b", "2G", "-l", "1400", "-w", "16K"))
	if v.Bound != monitor.BoundSocket || v.Cause == nil || v.Cause.Kind != "udp_receive_buffer" {
		t.Fatalf("bound %s (cause %+v), want socket drops: %s", v.Bound, v.Cause, v.Summary)
	}
	if !strings.Contains(v.Summary, "reached the application") || !strings.Contains(v.Summary, "KiB buffer") {
		t.Errorf("the sentence gives no throughput or buffer: %s", v.Summary)
	}
	if f := verdictFinding(v, finding.RunSocketDrops); f == nil || !strings.Contains(f.Fix, "net.core.rmem_max=") || !strings.Contains(f.Fix, "iperf3 -w") {
		t.Errorf("socket finding %+v", f)
	}
	roomy := newIperfBed(t)
	v, fs, _ := monitorRun(t, []string{roomy.Host}, roomy.command("-t", "2", "-u", "-b", "20M", "-l", "1400", "-w", "4M"))
	healthy(t, v, fs)
	if st := layerState(v, "socket"); st != "room" {
		t.Errorf("20 Mb/s into 4 MiB: socket %s: %s", st, v.Summary)
	}
}

// A host whose only path is a veth (a container, a namespace, a CI
// host): nicdiag monitor runs inside a namespace holding nothing but lo
// and a veth, with no interface named; the verdict judges the veth,
// says why it was watched, and is not "no traffic".
func TestRunVerdictVethOnlyHost(t *testing.T) {
	b := newIperfBed(t)
	// The monitor's own namespace: the bed's host end moves into it.
	ns, ip := throwawayNetns(t, "nicdiag-vethonly")
	ip("link", "set", b.Host, "netns", ns)
	ip("-n", ns, "addr", "add", b.HostAddr+"/24", "dev", b.Host)
	ip("-n", ns, "link", "set", b.Host, "up")
	ip("-n", ns, "link", "set", "lo", "up")
	argv := append([]string{"netns", "exec", ns, binary(t), "monitor", "--json", "--interval", "250ms", "--"},
		b.command("-t", "2", "-b", "100M", "--fq-rate", "100M")...)
	cmd := exec.Command("ip", argv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() == exitFail {
		t.Fatalf("nicdiag monitor: %v: %s", err, errb.String())
	}
	v, _, _ := summaryOf(t, out.Bytes(), errb.String())
	if v.Bound == monitor.BoundUnknown && len(v.Traffic) == 0 || v.ActiveSamples == 0 {
		t.Fatalf("no verdict on the veth-only host: %s %s", v.Bound, v.Summary)
	}
	judged := false
	for _, w := range v.Watched {
		judged = judged || w.NIC == b.Host && w.Judged && w.Why != ""
	}
	if !judged || !strings.Contains(v.Summary, b.Host) {
		t.Errorf("the veth %s is not judged with a reason: %+v: %s", b.Host, v.Watched, v.Summary)
	}
}

// Without an interface named, on a host with other interfaces, the run
// watches the one its command's flows leave by (the veth), judges it, and
// says why.
func TestRunVerdictFollowsFlows(t *testing.T) {
	b := newIperfBed(t)
	v, fs, _ := monitorRun(t, nil, b.command("-t", "2", "-b", "100M", "--fq-rate", "100M"))
	var w *monitor.Watched
	for i := range v.Watched {
		if v.Watched[i].NIC == b.Host {
			w = &v.Watched[i]
		}
	}
	if w == nil || !w.Judged || w.Why != monitor.WhyRouted {
		t.Fatalf("the veth %s the flows leave by is not judged as routed: %+v: %s", b.Host, v.Watched, v.Summary)
	}
	healthy(t, v, fs)
}

// TestRunVerdictOtherWork: a yes(1) pinned to each CPU while iperf3 runs
// at full speed: the run's CPUs are full of other work, and the verdict
// says so, naming yes, never core (packet work) or outside_host. It makes
// the CPUs the bound, and would disturb other tests: it runs alone
// (NICDIAG_ALONE=1).
func TestRunVerdictOtherWork(t *testing.T) {
	if os.Getenv("NICDIAG_ALONE") != "1" {
		t.Skip("runs alone: NICDIAG_ALONE=1 (test.sh does)")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("no taskset")
	}
	b := newIperfBed(t)
	for c := range runtime.NumCPU() {
		hog := exec.Command("taskset", "-c", strconv.Itoa(c), "yes")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}
	v, _, _ := monitorRun(t, []string{b.Host}, b.command("-t", "3"))
	if v.Bound != monitor.BoundOtherWork || v.Cause == nil || !strings.Contains(v.Summary, "yes (PID") {
		t.Fatalf("bound %s, want other work naming yes: %s", v.Bound, v.Summary)
	}
	if f := verdictFinding(v, finding.RunOtherWork); f == nil || !strings.Contains(f.Fix, "taskset") {
		t.Errorf("other work finding %+v", f)
	}
}

// verdictFinding returns the verdict's finding of code, or nil.
func verdictFinding(v monitor.Verdict, code finding.Code) *finding.Finding {
	for i := range v.Findings {
		if v.Findings[i].Code == code {
			return &v.Findings[i]
		}
	}
	return nil
}

// layerState is the state of the stack's layer named, "" when unread.
func layerState(v monitor.Verdict, layer string) string {
	if v.Stack == nil {
		return ""
	}
	for _, l := range v.Stack.Layers {
		if string(l.Layer) == layer {
			return string(l.State)
		}
	}
	return fmt.Sprint("no layer ", layer)
}
