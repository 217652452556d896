package stack

import (
	"fmt"
	"strings"
)

// Thresholds of the conntrack and other-work judgements.
const (
	// conntrackFullMin: a table this full is near its limit (warned,
	// not bound, unless it dropped).
	conntrackFullMin = 0.9
	// otherMin: other processes taking this much of a CPU (percent) the
	// run used bound it.
	otherMin = 50
	// runUsedMin: the run used a CPU when its processes or packet threads
	// took this much of it (percent).
	runUsedMin = 10
	// waitMin and otherWaitMin: the run's threads waiting this much of the
	// time for a CPU (percent) where other processes took at least
	// otherWaitMin of it (and more than the packet threads) were held by
	// that other work, however little of the CPU the run got.
	waitMin      = 20
	otherWaitMin = 25
	// demandMin: the wait binds only a run that wanted at least this much
	// of a CPU (its threads' time and their wait, over every CPU): a
	// rate-limited sender that wakes a few thousand times a second waits
	// at each wake on a busy host, and catches up after.
	demandMin = 50
)

// judgeConntrack judges each namespace's connection tracking table.
func judgeConntrack(nss []NamespaceSummary) ([]Judgement, LayerStatus) {
	st := LayerStatus{Layer: LayerConntrack, State: StateUnknown, Note: "conntrack was not read"}
	absent := len(nss) > 0
	var out []Judgement
	for i := range nss {
		n := &nss[i]
		absent = absent && n.ConntrackAbsent
		c := n.Conntrack
		if c == nil {
			continue
		}
		if st.State == StateUnknown {
			st = LayerStatus{Layer: LayerConntrack, State: StateRoom}
		}
		fill := 0.0
		if c.Max > 0 {
			fill = float64(n.ConntrackMaxCount) / float64(c.Max)
		}
		lost := c.Drop + c.InsertFailed
		if fill < conntrackFullMin && lost == 0 && c.EarlyDrop == 0 {
			continue
		}
		j := Judgement{Layer: LayerConntrack, Kind: "conntrack_full", Subject: nsName(n), Share: fill, Bound: lost > 0,
			Summary: fmt.Sprintf("the connection tracking table held up to %d entries of its %d (%s)", n.ConntrackMaxCount, c.Max, shareText(fill)),
			Fix: fmt.Sprintf("sysctl -w net.netfilter.nf_conntrack_max=%d in the initial network namespace (and a hash table to match: echo %d > /sys/module/nf_conntrack/parameters/hashsize), or exempt the run's traffic from tracking",
				max(2*c.Max, 65536), max(2*c.Max, 65536)/4),
			Evidence: []string{fmt.Sprintf("drop %d, early_drop %d, insert_failed %d", c.Drop, c.EarlyDrop, c.InsertFailed)}}
		if lost > 0 {
			j.Kind = "conntrack_drops"
			j.Summary += fmt.Sprintf(", and dropped %s packets it could not track (\"nf_conntrack: table full, dropping packet\")", countText(lost))
		}
		if j.Bound {
			st = LayerStatus{Layer: LayerConntrack, State: StateBound, Note: j.Summary}
		}
		out = append(out, j)
	}
	if absent {
		st = LayerStatus{Layer: LayerConntrack, State: StateNotApplicable, Note: "no conntrack in this kernel"}
	}
	return out, st
}

// NoteNotScanned is the other-work layer's note where no process scan
// covered the run: the CPUs' other work is unknown.
const NoteNotScanned = "the process table was not scanned"

// judgeOtherWork judges the CPUs the run used that other processes kept
// busy: where the run's threads waited for the CPU while other work took
// it, or where other work took most of a CPU the run worked on. scanned
// says whether any process scan covered the run.
func judgeOtherWork(cpus []CPUSummary, runPID int, scanned bool) ([]Judgement, LayerStatus) {
	switch {
	case !scanned:
		return nil, LayerStatus{Layer: LayerOtherWork, State: StateUnknown, Note: NoteNotScanned}
	case runPID == 0:
		return nil, LayerStatus{Layer: LayerOtherWork, State: StateUnknown,
			Note: "no process tree was watched: the run's processes cannot be told from other work; judge the CPUs by their busy time"}
	}
	st := LayerStatus{Layer: LayerOtherWork, State: StateRoom}
	var out []Judgement
	demand := 0.0
	for i := range cpus {
		demand += cpus[i].RunPct + cpus[i].RunWaitPct
	}
	for i := range cpus {
		c := &cpus[i]
		run := c.RunPct + c.PacketPct
		waited := c.RunWaitPct >= waitMin && c.OtherPct >= otherWaitMin && c.OtherPct >= c.PacketPct && demand >= demandMin
		if !waited && (run < runUsedMin || c.OtherPct < otherMin) {
			continue
		}
		other := min(c.OtherPct, 100)
		var names []string
		for _, p := range c.Top {
			names = append(names, fmt.Sprintf("%s (PID %d) %.0f %%", p.Comm, p.PID, min(p.Pct, 100)))
		}
		j := Judgement{Layer: LayerOtherWork, Kind: "other_work", Subject: fmt.Sprintf("CPU %d", c.CPU), Bound: true, Share: other / 100,
			Summary: fmt.Sprintf("other processes took %.0f %% of CPU %d, where the run's own work took %.0f %% and its threads waited %.0f %% of the time for it: %s",
				other, c.CPU, min(run, 100), c.RunWaitPct, strings.Join(names, ", ")),
			Fix:      fmt.Sprintf("give the run CPUs of its own: move the other work away (taskset -pc LIST PID) or pin the run elsewhere (taskset -c LIST CMD, iperf3 -A N); CPU %d is shared", c.CPU),
			Evidence: []string{fmt.Sprintf("CPU %d: run %.0f %% (waiting %.0f %%), packet threads %.0f %%, other %.0f %%", c.CPU, c.RunPct, c.RunWaitPct, c.PacketPct, c.OtherPct)}}
		st = LayerStatus{Layer: LayerOtherWork, State: StateBound, Note: j.Summary}
		out = append(out, j)
	}
	return out, st
}
