package monitor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/stack"
)

// judgeLines judges the sample lines of a record ReadRecord accepted as
// rec, each as a whole (Window.AddSample), against the limits of its start
// line: what a run that wrote them judged.
func judgeLines(t testing.TB, in []byte, rec *Record) Verdict {
	t.Helper()
	w := NewWindow(rec.Limits)
	if len(rec.Run.Command) > 0 {
		w.commandRun()
	}
	sc := bufio.NewScanner(bytes.NewReader(in))
	sc.Buffer(nil, MaxLineBytes+1)
	n := 0
	for sc.Scan() && n < len(rec.Samples) {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		body, kind, _, err := classify(line)
		if err != nil || kind != "sample" {
			continue
		}
		s, err := decodeSample(body, map[int]bool{}, map[queueKey]bool{})
		if err != nil {
			t.Fatalf("a sample ReadRecord took: %v", err)
		}
		w.AddSample(s)
		n++
	}
	return w.Verdict()
}

// stackRun is a run of n samples whose stack parts bind it in turn: an
// interface added at the third sample (routed), a shaper on it, drops at
// a UDP socket, a full conntrack table, other work on CPU 1.
func stackRun(n int) []Sample {
	pps := ppsFor(190, fullFrame)
	var out []Sample
	for i, x := range (runOf{cpus: []irq.CPURate{cpuAt(0, 1, 10, 5, 5), cpuAt(1, 0, 0, 60, 35)},
		nics: []irq.NICRate{nicAt("eth0", 10, 100, 10, 100)}}).samples(n) {
		s := Sample{Sample: x}
		st := roomyStack(1)
		st.Time = x.Time
		if i >= 2 {
			s.NICs = append(s.NICs, nicAt("veth1", 1000, 100, pps, fullBytes))
			st.Interfaces = []stack.Interface{{Netns: 4026531840, Name: "veth1", Index: 7, Flows: 1}}
			st.Qdiscs = []stack.Qdisc{{Netns: 4026531840, Iface: "veth1", Kind: "tbf", Handle: "1:", Parent: "root",
				Rate: 200e6 / 8, Bytes: uint64(pps * fullBytes), Packets: uint64(pps), Overlimits: uint64(pps / 10)}}
			st.Namespaces[0].Sockets.UDPInDatagrams, st.Namespaces[0].Sockets.UDPRcvbufErrors = 1000, 400
			st.Namespaces[0].Sockets.UDPInErrors = 400
			st.Namespaces[0].ConntrackAbsent = false
			st.Namespaces[0].Conntrack = &stack.Conntrack{Count: 65536, Max: 65536, Drop: 30, StatsKnown: true}
			st.RunPID = 99
			st.Run = []stack.RunCPU{{CPU: 1, Pct: 20, WaitPct: 40}}
			st.CPUs, st.CPUIntervalS = []stack.CPUWork{{CPU: 1, OtherPct: 75, Top: []stack.ProcWork{{PID: 7, Comm: "yes", Pct: 75}}}}, 1
		}
		if i == 2 {
			s.Added = []Limits{{NIC: "veth1", Virtual: true, MTU: 1500, Why: WhyRouted}}
		}
		s.Stack = &st
		out = append(out, s)
	}
	return out
}

// stackSeed is stackRun as a record.
func stackSeed(t testing.TB) []byte {
	var b bytes.Buffer
	w := NewWriter(&b)
	if err := w.WriteStart(Header{Interval: time.Second, Command: testArgv, Limits: []Limits{{NIC: "eth0", PortMbps: 1000, Why: WhyPhysical}}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range stackRun(8) {
		if err := w.WriteRunSample(s); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// TestRecordStackRoundTrip: a run's record with stack parts and an
// interface added mid-run reads back to the verdict the run judged live:
// the shaper on the added veth bound it, the stack's losses and other
// work beside it, the veth judged as routed.
func TestRecordStackRoundTrip(t *testing.T) {
	live := NewWindow([]Limits{{NIC: "eth0", PortMbps: 1000, Why: WhyPhysical}})
	for _, s := range stackRun(8) {
		live.AddSample(s)
	}
	lv := live.Verdict()
	rec, err := ReadRecord(bytes.NewReader(stackSeed(t)))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(lv)
	b, _ := json.Marshal(rec.Verdict)
	if !bytes.Equal(a, b) {
		t.Fatalf("the record's verdict differs from the run's:\n%s\n%s", b, a)
	}
	checkVerdict(t, lv)
	if lv.Bound != BoundQdisc || lv.Limit == nil || lv.Limit.Subject != "tbf 1: on veth1" || lv.Stack == nil {
		t.Fatalf("bound %s, limit %+v: %s", lv.Bound, lv.Limit, lv.Summary)
	}
	if len(rec.Limits) != 2 || rec.Limits[1].NIC != "veth1" || rec.Limits[1].Why != WhyRouted {
		t.Errorf("limits read back %+v", rec.Limits)
	}
	var judged []string
	for _, w := range lv.Watched {
		if w.Judged {
			judged = append(judged, w.NIC+":"+w.Why)
		}
	}
	// eth0 moved almost nothing: the routed veth is judged.
	if strings.Join(judged, ",") != "veth1:routed" {
		t.Errorf("judged %v, want the routed veth alone", judged)
	}
	// The losses beside the shaper stay warnings; the other work did not
	// bind a run a shaper held: info.
	for code, sev := range map[string]string{"run.socket_drops": "warn", "run.conntrack_drops": "warn", "run.other_work": "info"} {
		found := false
		for _, f := range lv.Findings {
			if string(f.Code) == code {
				found = true
				if f.Severity.String() != sev {
					t.Errorf("%s at %s, want %s: %s", code, f.Severity, sev, f.Summary)
				}
			}
		}
		if !found {
			t.Errorf("no %s beside the verdict: %v", code, lv.Findings)
		}
	}
}
