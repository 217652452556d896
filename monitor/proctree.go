package monitor

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/nicdiag/nicdiag/internal/procs"
	"golang.org/x/sys/unix"
)

// markerVar begins the name of the environment variable Start adds to the
// command's environment: the name, one per run, marks every process the
// command starts, also those that leave its process group and its parent.
// A name of its own, not a value, so that a nested run's marker (nicdiag
// monitor -- nicdiag monitor -- CMD) adds to the outer one instead of
// replacing it.
const markerVar = "NICDIAG_MONITOR_RUN_"

// How a run's leftovers are ended: SIGTERM (and SIGCONT, for those
// stopped), SIGKILL after leftoverGrace, checked every pollEvery, given up
// after killWait more (a process in uninterruptible sleep).
const (
	leftoverGrace = time.Second
	killWait      = 2 * time.Second
	pollEvery     = 10 * time.Millisecond
)

// procKey names one process across pid reuse.
type procKey struct {
	pid   int
	start uint64
}

// tree is a run's command and every process it started: those in its
// process group, those whose environment holds the run's marker, those
// seen in its tree of descendants, and the descendants of all of these.
// Processes older than the command are never part of it; the caller's own
// (a load generator it gave Run.Watch, say) are not either, unless the
// command started them.
type tree struct {
	pid    int    // the command
	pgid   int    // its process group; 0 when it did not get one of its own
	start  uint64 // its start time
	marker []byte // markerVarID=1
	self   int    // this process

	seen   map[procKey]bool // seen among the command's descendants while it ran
	marked map[procKey]bool // environment read: holds the marker or not
}

// newMarker returns markerVarID=1 with an ID no other run shares.
func newMarker() string {
	b := make([]byte, 12)
	// getrandom(2) from the kernel: crypto/rand would link the FIPS
	// module, whose package init every command pays at start-up. The pid
	// and the time make the ID unique where it fails.
	if _, err := unix.Getrandom(b, 0); err != nil {
		binary.NativeEndian.PutUint64(b, uint64(time.Now().UnixNano()))
	}
	return markerVar + strconv.Itoa(os.Getpid()) + "_" + hex.EncodeToString(b) + "=1"
}

// newTree describes the command started as pid, which has a process group
// of its own when ownGroup.
func newTree(pid int, ownGroup bool, marker string) *tree {
	t := &tree{pid: pid, marker: []byte(marker), self: os.Getpid(),
		seen: map[procKey]bool{}, marked: map[procKey]bool{}}
	if ownGroup {
		t.pgid = pid
	}
	if p, ok := procs.Read(pid); ok {
		t.start = p.Start
	}
	return t
}

// remember records the command's present descendants, so that they are
// still found once the command is gone and they have been re-parented.
func (t *tree) remember() {
	ps := procs.List()
	for _, p := range procs.Descendants(ps, map[int]bool{t.pid: true}) {
		t.seen[procKey{p.PID, p.Start}] = true
	}
}

// members returns the processes of ps that belong to the command, other
// than the command itself.
func (t *tree) members(ps []procs.Proc) []procs.Proc {
	roots := map[int]bool{}
	for _, p := range ps {
		if p.PID == t.pid || p.PID == t.self || p.Start < t.start {
			continue
		}
		if (t.pgid != 0 && p.PGID == t.pgid) || t.seen[procKey{p.PID, p.Start}] || t.hasMarker(p) {
			roots[p.PID] = true
		}
	}
	out := procs.Descendants(ps, roots)
	for _, p := range ps {
		if roots[p.PID] {
			out = append(out, p)
		}
	}
	return out
}

// hasMarker reports whether p's environment holds the run's marker. An
// environment is read once per process; a zombie's reads as empty.
func (t *tree) hasMarker(p procs.Proc) bool {
	k := procKey{p.PID, p.Start}
	if m, ok := t.marked[k]; ok {
		return m
	}
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID), "environ"))
	m := err == nil && (bytes.HasPrefix(env, append(t.marker, 0)) ||
		bytes.Contains(env, append(append([]byte{0}, t.marker...), 0)))
	if err == nil && p.State != 'Z' {
		t.marked[k] = m
	}
	return m
}

// signal sends sig to the command's process group, or to the command alone
// when it has none of its own.
func (t *tree) signal(sig syscall.Signal) {
	if t.pgid != 0 {
		_ = unix.Kill(-t.pgid, sig)
		return
	}
	_ = unix.Kill(t.pid, sig)
}

// endLeftovers ends what the command left running once it has exited:
// SIGTERM and SIGCONT to each member, SIGKILL to those still there after
// leftoverGrace, until none is left or killWait more has passed. It reaps
// those that were re-parented to this process (a child subreaper), never
// the command itself (exec.Cmd.Wait does).
func (t *tree) endLeftovers() {
	termed := map[procKey]bool{}
	killAt := time.Now().Add(leftoverGrace)
	giveUp := killAt.Add(killWait)
	for {
		now := time.Now()
		alive := 0
		for _, p := range t.members(procs.List()) {
			if p.Gone() {
				if p.PPID == t.self {
					var ws unix.WaitStatus
					_, _ = unix.Wait4(p.PID, &ws, unix.WNOHANG, nil)
				}
				continue
			}
			alive++
			k := procKey{p.PID, p.Start}
			switch {
			case now.After(killAt):
				_ = unix.Kill(p.PID, unix.SIGKILL)
			case !termed[k]:
				termed[k] = true
				_ = unix.Kill(p.PID, unix.SIGTERM)
				_ = unix.Kill(p.PID, unix.SIGCONT)
			}
		}
		if alive == 0 || now.After(giveUp) {
			return
		}
		time.Sleep(pollEvery)
	}
}
