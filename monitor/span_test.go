package monitor

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/stack"
)

// TestJudgeCommandEdges: the run of a command began before its load (the
// monitor's first reading comes before the command starts: a server to
// start, a connection to set up) and ends with it, so the first and the
// last sample count for the part their traffic filled, as in the load
// generator's own report; a window that began with the load already
// running (no command) cannot tell, and counts them whole. A record of a
// command's run is judged the same as the run.
func TestJudgeCommandEdges(t *testing.T) {
	busy := runOf{cpus: pairCPUs(), nics: pairNICs(1)}
	edge := func(fill float64) []irq.Sample {
		return runOf{cpus: pairCPUs(), nics: pairNICs(fill)}.samples(1)
	}
	samples := concat(edge(0.4), busy.samples(8), edge(0.7))
	only := judgeRoom(busy.samples(8), pairLimits())

	w := NewWindow(pairLimits())
	w.commandRun()
	for _, x := range samples {
		w.AddSample(Sample{Sample: x, Stack: roomy()})
	}
	cmd := w.Verdict()
	if !near(cmd.ActiveSeconds, 9.1, 1e-9) || !near(cmd.AchievedMbps, only.AchievedMbps, 1e-6) {
		t.Errorf("a command's run: %v s at %v Mb/s, want 9.1 s at the load's %v", cmd.ActiveSeconds, cmd.AchievedMbps, only.AchievedMbps)
	}

	plain := judgeRoom(samples, pairLimits())
	if want := only.AchievedMbps * 9.1 / 10; !near(plain.ActiveSeconds, 10, 1e-9) || !near(plain.AchievedMbps, want, 1e-6) {
		t.Errorf("no command: %v s at %v Mb/s, want 10 s at %v", plain.ActiveSeconds, plain.AchievedMbps, want)
	}

	var b bytes.Buffer
	mw := NewWriter(&b)
	if err := mw.WriteStart(Header{Interval: time.Second, Command: testArgv, Limits: pairLimits()}); err != nil {
		t.Fatal(err)
	}
	for _, x := range samples {
		if err := mw.WriteRunSample(Sample{Sample: x, Stack: roomy()}); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := ReadRecord(&b)
	if err != nil {
		t.Fatal(err)
	}
	if v := rec.Verdict; !near(v.ActiveSeconds, cmd.ActiveSeconds, 1e-9) || !near(v.AchievedMbps, cmd.AchievedMbps, 1e-6) {
		t.Errorf("the record of a command's run: %v s at %v Mb/s, want the run's %v s at %v", v.ActiveSeconds, v.AchievedMbps,
			cmd.ActiveSeconds, cmd.AchievedMbps)
	}
}

// roomy is roomyStack over one second, for a sample of one.
func roomy() *stack.Sample {
	s := roomyStack(1)
	return &s
}

// TestWindowVerdictMidRun: a verdict asked while the run goes on (a
// caller's live view) leaves the window's sums as they were: the verdict
// at the end is the one of the same samples judged at once.
func TestWindowVerdictMidRun(t *testing.T) {
	threads := []irq.ThreadRate{{PID: 7, TID: 7, Comm: "iperf3", UserPct: 20, SystemPct: 40, CPU: 1}}
	s := concat(runOf{cpus: pairCPUs(), nics: pairNICs(0.5), threads: threads}.samples(1),
		runOf{cpus: pairCPUs(), nics: pairNICs(1), threads: threads}.samples(9))
	w := NewWindow(pairLimits())
	for i := range s {
		w.AddSample(Sample{Sample: s[i], Stack: roomy()})
		_ = w.Verdict()
		_ = w.Summary()
	}
	got, err := json.Marshal(w.Verdict())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(judgeRoom(s, pairLimits()))
	if !bytes.Equal(got, want) {
		t.Errorf("asked at every sample, the verdict ends as\n%.600s\nwant\n%.600s", got, want)
	}
}
