package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// jsonLines parses every line of b as a JSON object.
func jsonLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", len(out)+1, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func types(lines []map[string]any) string {
	var s []string
	for _, l := range lines {
		s = append(s, l["type"].(string))
	}
	return strings.Join(s, " ")
}

func checkSample(t *testing.T, m map[string]any) {
	t.Helper()
	if m["schema"] != jsonSchema || m["interval_s"].(float64) <= 0 || m["time"] == nil {
		t.Errorf("sample header: %v", m)
	}
	cpus, _ := m["cpus"].([]any)
	if len(cpus) == 0 {
		t.Fatalf("sample without cpus: %v", m)
	}
	c := cpus[0].(map[string]any)
	for _, k := range []string{"cpu", "irq_pct", "softirq_pct", "busy_pct", "net_rx_per_s", "net_tx_per_s",
		"nic_irqs_per_s", "softnet_processed_per_s", "softnet_dropped_per_s", "softnet_squeezed_per_s"} {
		if _, ok := c[k]; !ok {
			t.Errorf("cpu object lacks %s: %v", k, c)
		}
	}
	if (c["irq_pct"] == nil) != (m["irq_time_accounted"] == false) {
		t.Errorf("irq_pct %v with irq_time_accounted %v", c["irq_pct"], m["irq_time_accounted"])
	}
}

func TestMonitorJSONAndRecord(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"monitor", "--json", "--interval", "100ms", "--duration", "1100ms", "--record", rec}, &out, &errb)
	if code == exitFail {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := jsonLines(t, out.Bytes())
	if got := types(lines); !strings.HasPrefix(got, "sample sample sample") || !strings.HasSuffix(got, " summary") {
		t.Fatalf("stdout types = %s", got)
	}
	checkSample(t, lines[0])
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	rl := jsonLines(t, b)
	if got := types(rl); got != "start "+types(lines) {
		t.Errorf("record types = %s, stdout %s", got, types(lines))
	}
	sum := rl[len(rl)-1]
	if _, ok := sum["findings"]; !ok || sum["interrupted"] != false {
		t.Errorf("summary = %v", sum)
	}
	// The exit code follows the findings.
	fs, _ := json.Marshal(sum["findings"])
	want := exitOK
	if strings.Contains(string(fs), `"severity":"warn"`) {
		want = exitWarn
	}
	if strings.Contains(string(fs), `"severity":"error"`) {
		want = exitError
	}
	if code != want {
		t.Errorf("exit %d, findings %s", code, fs)
	}
}

// Ctrl-C mid-run: the record holds every completed sample and a summary.
func TestMonitorCancelKeepsRecord(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(750*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	code := run(ctx, []string{"monitor", "--interval", "200ms", "--record", rec}, &out, &errb)
	if code == exitFail {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	rl := jsonLines(t, b)
	got := types(rl)
	// 750 ms at 200 ms: three samples on an idle host, one at least on
	// a loaded one.
	if !strings.HasPrefix(got, "start sample") || !strings.HasSuffix(got, "summary") {
		t.Fatalf("record types = %s", got)
	}
	for _, l := range rl[1 : len(rl)-1] {
		checkSample(t, l)
	}
	if rl[len(rl)-1]["interrupted"] != true {
		t.Error("summary does not say it was interrupted")
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Error("escape codes on a non-terminal")
	}
	if !strings.Contains(out.String(), "NET_RX/s") || !strings.Contains(out.String(), "verdict:") {
		t.Errorf("plain output:\n%s", out.String())
	}
}

func TestMonitorCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"monitor", "--json", "--interval", "200ms", "--", "sh", "-c", "echo from-command; sleep 0.7; exit 3"}, &out, &errb)
	if code == exitFail {
		t.Fatalf("exit %d (the command's own status must not become nicdiag's): %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "from-command") {
		t.Fatalf("with --json the command's output goes to stderr; stderr = %q", errb.String())
	}
	lines := jsonLines(t, out.Bytes())
	if got := types(lines); got != "summary" {
		t.Fatalf("nicdiag printed %s while the command ran", got)
	}
	cmd := lines[0]["command"].(map[string]any)
	if cmd["exit_code"].(float64) != 3 || lines[0]["samples"].(float64) < 2 {
		t.Errorf("summary = %v", lines[0])
	}
}

func TestMonitorCommandCannotStart(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"monitor", "--", "/nonexistent/nicdiag-test"}, &out, &errb)
	if code != exitFail || !strings.Contains(errb.String(), "cannot start") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// monitor --report writes the picture of the run at its end.
func TestMonitorReport(t *testing.T) {
	out := t.TempDir() + "/run.html"
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"monitor", "--interval", "200ms", "--duration", "700ms", "--report", out}, &stdout, &stderr)
	if code == exitFail {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("<svg")) || bytes.Contains(b, []byte("<script")) {
		t.Errorf("report is not a script-free page with charts (%d bytes)", len(b))
	}
	// Without --record there is no source file to name.
	if bytes.Contains(b, []byte("nicdiag report: .<")) || bytes.Contains(b, []byte(" from .")) {
		t.Errorf("report names a source file %q that does not exist", ".")
	}
	code = run(context.Background(), []string{"monitor", "--duration", "1s", "--report", t.TempDir() + "/run.png"}, &stdout, &stderr)
	if code != exitFail {
		t.Errorf("an unknown report format ran the monitor (exit %d)", code)
	}
}

func TestInterspersedFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	j := fs.Bool("json", false, "")
	pos, cmd, err := parseInterspersed(fs, []string{"eth0", "--json", "eth1", "--", "ping", "-c", "1"})
	if err != nil || !*j || !slices.Equal(pos, []string{"eth0", "eth1"}) || !slices.Equal(cmd, []string{"ping", "-c", "1"}) {
		t.Errorf("pos %q cmd %q json %v err %v", pos, cmd, *j, err)
	}
	pos, cmd, err = parseInterspersed(fs, []string{"eth0"})
	if err != nil || len(pos) != 1 || cmd != nil {
		t.Errorf("no terminator: pos %q cmd %q err %v", pos, cmd, err)
	}
}

func TestRenderSampleQueueTraffic(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	x := irq.Sample{IntervalS: 1, IRQTimeAccounted: true, NICs: []irq.NICRate{
		{Name: "eth0", RXPacketsPerS: 3000, IRQsPerS: 300, Queues: []irq.QueueRate{
			{IRQ: 40, Kind: irq.KindTxRx, Index: 0, CPU: 1, IRQsPerS: 200,
				RXPacketsPerS: f(2000), RXBytesPerS: f(3e6), TXPacketsPerS: f(10)},
			{IRQ: 41, Kind: irq.KindTxRx, Index: 1, CPU: 2, IRQsPerS: 100},
		}},
		{Name: "eth1", QueueStatsError: "no such device", Queues: []irq.QueueRate{
			{IRQ: 50, Kind: irq.KindRX, Index: 0, CPU: -1},
		}},
	}}
	var b strings.Builder
	renderSample(&b, x)
	out := b.String()
	want := "  txrx-0@1         2000         10      24.0         -       200\n"
	if !strings.Contains(out, want) {
		t.Errorf("no per-queue line %q in\n%s", want, out)
	}
	if strings.Contains(out, "\n  txrx-1@2 ") || strings.Contains(out, "\n  rx-0@- ") {
		t.Errorf("a queue without counters got a traffic line:\n%s", out)
	}
	if !strings.Contains(out, "(per-queue counters: no such device)") {
		t.Errorf("queue stats error not shown:\n%s", out)
	}
	if !strings.Contains(out, "txrx-0@1 200 txrx-1@2 100") {
		t.Errorf("queue summary on the NIC line changed:\n%s", out)
	}
}

// TestMonitorQueueStatsEth0 runs monitor on this host's eth0 and checks
// that queue 0 carries per-queue packet rates (virtio_net since 6.10 has
// them only over netdev netlink qstats). It checks that the fields are
// there, not that traffic flowed. It skips without eth0 or where the kernel
// has no netdev queue statistics for it.
func TestMonitorQueueStatsEth0(t *testing.T) {
	if _, err := os.Stat("/sys/class/net/eth0"); err != nil {
		t.Skip("no eth0")
	}
	// Probe the library first: skip where neither the kernel's netdev queue
	// statistics nor the driver's ethtool statistics count eth0's queues.
	eth0, err := nicinfo.Get(context.Background(), "eth0")
	if err != nil {
		t.Fatal(err)
	}
	probe, err := irq.NewSampler(context.Background(), []nicinfo.NIC{*eth0}, irq.WithInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if x, err := probe.Next(context.Background()); err != nil || len(x.NICs) != 1 || !queueCounted(x.NICs[0]) {
		t.Skipf("no per-queue counters for eth0: %v %+v", err, x.NICs)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"monitor", "--json", "--interval", "500ms", "--duration", "2s", "eth0"}, &out, &errb)
	if code == exitFail {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := jsonLines(t, out.Bytes())
	if len(lines) < 2 || lines[0]["type"] != "sample" {
		t.Fatalf("stdout types = %s", types(lines))
	}
	// Some sample carries queue 0's rates (the first one normally does: the
	// sampler reads once before it; on a loaded machine a read may come
	// late, so every sample of the run counts).
	var rx, tx bool
	for _, line := range lines {
		if line["type"] != "sample" {
			continue
		}
		nics, _ := line["nics"].([]any)
		if len(nics) != 1 {
			t.Fatalf("nics = %v", line["nics"])
		}
		n := nics[0].(map[string]any)
		if e, ok := n["queue_stats_error"]; ok {
			t.Fatalf("eth0 queue_stats_error: %v", e)
		}
		queues, _ := n["queues"].([]any)
		for _, q := range queues {
			q := q.(map[string]any)
			if q["index"].(float64) != 0 {
				continue
			}
			if k := q["kind"]; k == string(irq.KindRX) || k == string(irq.KindTxRx) {
				_, ok := q["rx_packets_per_s"]
				rx = rx || ok
			}
			if k := q["kind"]; k == string(irq.KindTX) || k == string(irq.KindTxRx) {
				_, ok := q["tx_packets_per_s"]
				tx = tx || ok
			}
		}
	}
	if !rx || !tx {
		t.Errorf("eth0 queue 0: no sample with rx_packets_per_s (%v) or tx_packets_per_s (%v):\n%s", rx, tx, out.String())
	}
}

// queueCounted reports whether any vector of n has per-queue traffic rates.
func queueCounted(n irq.NICRate) bool {
	for _, q := range n.Queues {
		if q.HasTraffic() {
			return true
		}
	}
	return false
}
