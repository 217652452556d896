package main

// The nicdiag process under SIGINT and SIGTERM, and the process tree of
// monitor's command: these tests run the built binary, since the signal
// watchdog, the private TMPDIR and the child subreaper belong to the
// process (runProcess), not to run.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nicdiag/nicdiag/internal/proctest"
	"github.com/nicdiag/nicdiag/snapshot"
)

// promptly is how soon after a signal nicdiag must have exited: the grace
// of runProcess plus room for a loaded machine.
const promptly = 3 * time.Second

// snapArchive packs a bundled snapshot into a .tar.gz, for --root.
func snapArchive(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "host.tar.gz")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := snapshot.Pack(context.Background(), f, snaps+"82576-minipcie-x1"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// nicdiagProc is a started nicdiag with TMPDIR pointed at a directory of the
// test's, and its standard output line by line.
type nicdiagProc struct {
	cmd    *exec.Cmd
	tmp    string
	lines  chan string // standard output, when the test did not give one
	stderr safeBuffer
	waited chan struct{}
	err    error
}

// startNicdiag starts the binary with args. With stdout nil its output
// comes line by line on p.lines.
func startNicdiag(t *testing.T, stdout *os.File, args ...string) *nicdiagProc {
	t.Helper()
	p := &nicdiagProc{tmp: t.TempDir(), waited: make(chan struct{})}
	p.cmd = exec.Command(binary(t), args...)
	p.cmd.Env = append(os.Environ(), "TMPDIR="+p.tmp)
	p.cmd.Stderr = &p.stderr
	// A process nicdiag left behind holding its stderr would keep Wait
	// from returning: it returns this long after nicdiag exits, with
	// exec.ErrWaitDelay, which fails the test.
	p.cmd.WaitDelay = 2 * time.Second
	if stdout != nil {
		p.cmd.Stdout = stdout
	} else {
		r, err := p.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		p.lines = make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				p.lines <- sc.Text()
			}
			close(p.lines)
		}()
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.waited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.waited:
		default:
			p.cmd.Process.Kill()
			<-p.waited
		}
	})
	return p
}

// line returns the next line of standard output that holds want, failing
// the test after 20 s.
func (p *nicdiagProc) line(t *testing.T, want string) string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("output ended before a line with %q; stderr:\n%s", want, p.stderr.String())
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-timeout:
			t.Fatalf("no line with %q in 20s; stderr:\n%s", want, p.stderr.String())
		}
	}
}

// rest returns the remaining lines of standard output.
func (p *nicdiagProc) rest() []string {
	var out []string
	for l := range p.lines {
		out = append(out, l)
	}
	return out
}

// signal sends sig and waits for nicdiag to exit: its exit code and how
// long that took. It fails the test if nicdiag is still running 10 s later.
func (p *nicdiagProc) signal(t *testing.T, sig syscall.Signal) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	return p.wait(t, start)
}

// wait waits for nicdiag to exit, up to 10 s after start.
func (p *nicdiagProc) wait(t *testing.T, start time.Time) (int, time.Duration) {
	t.Helper()
	select {
	case <-p.waited:
	case <-time.After(10*time.Second - time.Since(start)):
		t.Fatalf("nicdiag still runs %v later; stderr:\n%s", time.Since(start), p.stderr.String())
	}
	took := time.Since(start)
	var ee *exec.ExitError
	switch {
	case errors.Is(p.err, exec.ErrWaitDelay):
		t.Errorf("nicdiag exited, but a process it started still holds its stderr (%v)", p.err)
	case p.err != nil && !errors.As(p.err, &ee):
		t.Fatal(p.err)
	}
	return p.cmd.ProcessState.ExitCode(), took
}

// tmpEmpty fails the test unless nicdiag's TMPDIR holds nothing.
func (p *nicdiagProc) tmpEmpty(t *testing.T) {
	t.Helper()
	ents, err := os.ReadDir(p.tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		n := 0
		filepath.WalkDir(filepath.Join(p.tmp, e.Name()), func(string, fs.DirEntry, error) error { n++; return nil })
		t.Errorf("left in TMPDIR: %s (%d entries)", e.Name(), n)
	}
}

// tmpSwept is tmpEmpty for a nicdiag that a signal ended: its removal of
// the private TMPDIR stops at the deadline (a loaded machine may not
// finish it), and what it leaves the next nicdiag that needs a TMPDIR
// removes. So if anything is left, one more nicdiag unpacks archive there
// before TMPDIR must be empty.
func (p *nicdiagProc) tmpSwept(t *testing.T, archive string) {
	t.Helper()
	if ents, _ := os.ReadDir(p.tmp); len(ents) > 0 {
		t.Logf("left for the next nicdiag: %d entries in TMPDIR", len(ents))
		runIn(t, p.tmp, "--root", archive, "list")
	}
	p.tmpEmpty(t)
}

// tmpHolds fails the test unless nicdiag's TMPDIR holds a directory
// (its private one) with something in it: that tmpEmpty afterwards means
// nicdiag removed it.
func (p *nicdiagProc) tmpHolds(t *testing.T) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(p.tmp, "nicdiag-*", "*"))
	if len(dirs) == 0 {
		t.Fatalf("nothing unpacked under TMPDIR %s", p.tmp)
	}
}

// signals are the two that end nicdiag, with the exit code each gives.
var signals = []struct {
	sig  syscall.Signal
	code int
}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}}

// fullPipe returns a pipe whose buffer is full: a write to w blocks until
// someone reads r, which nobody does.
func fullPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	fd := int(w.Fd())
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, 4096); err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := unix.Write(fd, buf); err != nil {
			if errors.Is(err, unix.EAGAIN) {
				break
			}
			t.Fatal(err)
		}
	}
	if err := unix.SetNonblock(fd, false); err != nil { // nicdiag's write must block
		t.Fatal(err)
	}
	return r, w
}

// blockedOnPipe reports whether a thread of pid waits to write to a pipe.
func blockedOnPipe(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
	for _, f := range tasks {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "pipe_write") {
			return true
		}
	}
	return false
}

// A command blocked for good (writing to a pipe nobody reads, which no
// context reaches) still ends on a signal: after the command's share of
// the grace, nicdiag removes its temporary files (the unpacked --root
// archive; snapshot's capture, which only the private TMPDIR holds for
// nicdiag), as far as the grace allows, and exits 128+signal.
func TestSignalBlockedWrite(t *testing.T) {
	archive := snapArchive(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		args []string
	}{
		{syscall.SIGTERM, 143, []string{"--root", archive, "list", "--json"}},
		{syscall.SIGINT, 130, []string{"--root", archive, "list", "--json"}},
		{syscall.SIGTERM, 143, []string{"--root", archive, "snapshot", "-o", "-"}},
	} {
		t.Run(tc.sig.String()+" "+tc.args[2], func(t *testing.T) {
			_, w := fullPipe(t)
			p := startNicdiag(t, w, tc.args...)
			if !waitUntil(20*time.Second, func() bool { return blockedOnPipe(p.cmd.Process.Pid) }) {
				t.Skipf("no thread of nicdiag seen waiting in pipe_write (wchan unreadable?); stderr:\n%s", p.stderr.String())
			}
			p.tmpHolds(t)
			code, took := p.signal(t, tc.sig)
			t.Logf("%s blocked: %v to exit %d: %v", tc.args[2], tc.sig, code, took)
			// The command's share of the grace, the rest kept for the removal.
			if share := signalGrace - signalGrace/removeShare; code != tc.code || took > promptly || took < share {
				t.Errorf("exit %d after %v; want %d after the command's %v of the grace, within %v", code, took, tc.code, share, promptly)
			}
			p.tmpSwept(t, archive)
		})
	}
	t.Run("second signal", func(t *testing.T) {
		_, w := fullPipe(t)
		p := startNicdiag(t, w, "--root", archive, "list", "--json")
		if !waitUntil(20*time.Second, func() bool { return blockedOnPipe(p.cmd.Process.Pid) }) {
			t.Skip("no thread of nicdiag seen waiting in pipe_write")
		}
		// Both pending at once, the kernel delivers SIGINT (2) first: either
		// may be the second. Either way it halves what is left of the grace.
		start := time.Now()
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.cmd.Process.Signal(syscall.SIGINT)
		code, took := p.wait(t, start)
		t.Logf("SIGTERM and SIGINT to exit %d: %v", code, took)
		if (code != 130 && code != 143) || took >= signalGrace {
			t.Errorf("exit %d after %v; a second signal halves the time left, and nicdiag exits 128+signal", code, took)
		}
		p.tmpSwept(t, archive)
	})
}

// waitUntil polls cond every 10 ms until it holds or d has passed.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// exitForSummary is the exit code docs/design.md §3 gives for the findings
// of a monitor --json summary line.
func exitForSummary(t *testing.T, line string) (int, map[string]any) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil || m["type"] != "summary" {
		t.Fatalf("not a summary line (%v): %s", err, line)
	}
	fs, _ := json.Marshal(m["findings"])
	switch {
	case bytes.Contains(fs, []byte(`"severity":"error"`)):
		return exitError, m
	case bytes.Contains(fs, []byte(`"severity":"warn"`)):
		return exitWarn, m
	}
	return exitOK, m
}

// lastLine returns the last line of lines, failing the test without one.
func lastLine(t *testing.T, lines []string, stderr string) string {
	t.Helper()
	if len(lines) == 0 {
		t.Fatalf("no output; stderr:\n%s", stderr)
	}
	return lines[len(lines)-1]
}

// monitor without a duration: a signal ends sampling; it prints the
// verdict of what it sampled and exits per its findings.
func TestSignalMonitor(t *testing.T) {
	for _, s := range signals {
		t.Run(s.sig.String(), func(t *testing.T) {
			p := startNicdiag(t, nil, "monitor", "--json", "--interval", "100ms")
			p.line(t, `"type":"sample"`)
			code, took := p.signal(t, s.sig)
			t.Logf("%v to exit %d: %v", s.sig, code, took)
			want, sum := exitForSummary(t, lastLine(t, p.rest(), p.stderr.String()))
			if code != want || took > promptly || sum["interrupted"] != true {
				t.Errorf("exit %d after %v, interrupted %v; want %d (the findings) within %v", code, took, sum["interrupted"], want, promptly)
			}
			p.tmpEmpty(t)
		})
	}
}

// noneLeft fails the test if a process with one of marks runs, and kills
// it.
func noneLeft(t *testing.T, marks []string) {
	t.Helper()
	for _, m := range marks {
		if pids := proctest.LiveWith(m); len(pids) > 0 {
			t.Errorf("%q still runs after nicdiag exited (pid %v)", m, pids)
			for _, pid := range pids {
				unix.Kill(pid, unix.SIGKILL)
			}
		}
	}
}

// treeScript is a shell script that starts six sleeps, each marked by a
// unique number of seconds: in the background (in the command's group,
// ignoring SIGINT as a shell's background jobs do), in a session of its
// own, orphaned by a subshell, double-forked from a session of its own,
// orphaned with its environment cleared, and double-forked from a session
// of its own with its environment cleared (which only nicdiag's sweep of
// its re-parented children finds).
func treeScript(t *testing.T, tag string) (script string, marks []string) {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	for i := range 6 {
		marks = append(marks, fmt.Sprintf("%d.%s", 300+i, tag))
	}
	script = fmt.Sprintf(`sleep %s & setsid sleep %s & (sleep %s &) ; setsid sh -c 'sleep %s &' ; `+
		`(env -i %s %s &) ; (setsid env -i %s %s &) ; wait`,
		marks[0], marks[1], marks[2], marks[3], sleep, marks[4], sleep, marks[5])
	t.Cleanup(func() {
		for _, m := range marks {
			for _, pid := range proctest.LiveWith(m) {
				unix.Kill(pid, unix.SIGKILL)
			}
		}
	})
	return script, marks
}

// allSleeping waits until a process runs each of marks.
func allSleeping(t *testing.T, p *nicdiagProc, marks []string) {
	t.Helper()
	if !waitUntil(20*time.Second, func() bool {
		for _, m := range marks {
			if len(proctest.Sleeping(m)) == 0 {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the command did not start its sleeps; stderr:\n%s", p.stderr.String())
	}
}

// monitor --duration D -- CMD: when the duration ends, the command and
// everything it started end with it, and nicdiag exits per its findings.
// The tree must be whole before the duration ends: on a machine so busy
// that its six processes take longer to start than D, the run is tried
// again with a duration four times as long, rather than the test timing
// the forks.
func TestMonitorCommandTree(t *testing.T) {
	for i, d := range []time.Duration{time.Second, 4 * time.Second, 16 * time.Second} {
		script, marks := treeScript(t, fmt.Sprintf("%d1%d", os.Getpid(), i))
		start := time.Now()
		p := startNicdiag(t, nil, "monitor", "--json", "--interval", "200ms", "--duration", d.String(), "--", "sh", "-c", script)
		whole := waitUntil(d+20*time.Second, func() bool {
			select {
			case <-p.waited:
				return true // ended: whole or not, as sampled below
			default:
			}
			for _, m := range marks {
				if len(proctest.Sleeping(m)) == 0 {
					return false
				}
			}
			return true
		}) && !exited(p)
		code, _ := p.wait(t, start.Add(d+10*time.Second)) // its startup, and ending a tree, on a busy machine
		took := time.Since(start)
		noneLeft(t, marks)
		if !whole {
			t.Logf("the tree was not whole within --duration %v (the machine is busy): again, longer", d)
			continue
		}
		t.Logf("monitor --duration %v with the tree: exit %d %v after it began", d, code, took)
		want, sum := exitForSummary(t, lastLine(t, p.rest(), p.stderr.String()))
		if code != want {
			t.Errorf("exit %d; want %d (the findings)", code, want)
		}
		if c, _ := sum["command"].(map[string]any); c == nil || c["error"] != "signal: interrupt" {
			t.Errorf("summary command = %v; want the command ended by SIGINT when the duration ended", sum["command"])
		}
		p.tmpEmpty(t)
		return
	}
	t.Fatal("the command's tree never started within --duration")
}

// exited reports whether nicdiag has exited.
func exited(p *nicdiagProc) bool {
	select {
	case <-p.waited:
		return true
	default:
		return false
	}
}

// monitor -- CMD, SIGINT or SIGTERM to nicdiag: passed on to the
// command's group; the command and what it started end; nicdiag prints the
// verdict and exits per its findings.
func TestSignalMonitorCommand(t *testing.T) {
	for i, s := range signals {
		t.Run(s.sig.String(), func(t *testing.T) {
			mark := fmt.Sprintf("1000.%d%d", os.Getpid(), i)
			p := startNicdiag(t, nil, "monitor", "--json", "--interval", "200ms", "--", "sleep", mark)
			allSleeping(t, p, []string{mark})
			code, took := p.signal(t, s.sig)
			t.Logf("monitor -- sleep: %v to exit %d: %v", s.sig, code, took)
			want, sum := exitForSummary(t, lastLine(t, p.rest(), p.stderr.String()))
			if code != want || took > promptly {
				t.Errorf("exit %d after %v; want %d (the findings) within %v", code, took, want, promptly)
			}
			c, _ := sum["command"].(map[string]any)
			if c == nil || c["error"] != "signal: "+map[syscall.Signal]string{syscall.SIGTERM: "terminated", syscall.SIGINT: "interrupt"}[s.sig] {
				t.Errorf("summary command = %v; want it ended by %v", sum["command"], s.sig)
			}
			noneLeft(t, []string{mark})
			p.tmpEmpty(t)
		})
	}
	t.Run("tree", func(t *testing.T) {
		script, marks := treeScript(t, fmt.Sprintf("%d2", os.Getpid()))
		p := startNicdiag(t, nil, "monitor", "--json", "--interval", "200ms", "--", "sh", "-c", script)
		allSleeping(t, p, marks)
		code, took := p.signal(t, syscall.SIGINT)
		t.Logf("monitor -- sh (tree): SIGINT to exit %d: %v", code, took)
		want, _ := exitForSummary(t, lastLine(t, p.rest(), p.stderr.String()))
		if code != want || took > promptly {
			t.Errorf("exit %d after %v; want %d within %v", code, took, want, promptly)
		}
		noneLeft(t, marks)
	})
}

// A command that ignores SIGINT and SIGTERM keeps the run from ending; the
// watchdog ends nicdiag after the grace, and the command with it.
func TestSignalMonitorCommandIgnores(t *testing.T) {
	mark := fmt.Sprintf("1000.%d9", os.Getpid())
	p := startNicdiag(t, nil, "monitor", "--json", "--interval", "200ms", "--", "sh", "-c", `trap "" INT TERM; sleep `+mark)
	allSleeping(t, p, []string{mark})
	code, took := p.signal(t, syscall.SIGTERM)
	t.Logf("monitor -- (ignores signals): SIGTERM to exit %d: %v", code, took)
	if code != 143 || took > promptly {
		t.Errorf("exit %d after %v; want 143 within %v", code, took, promptly)
	}
	noneLeft(t, []string{mark})
	p.tmpEmpty(t)
}

// The command's own exit status is in the summary, not nicdiag's: nicdiag
// exits per the findings (docs/design.md §3), also when the command exits
// 7 or dies of a signal.
func TestMonitorCommandStatus(t *testing.T) {
	for _, tc := range []struct {
		script string
		code   float64
		error  string
	}{{"exit 7", 7, "exit status 7"}, {"kill -KILL $$", -1, "signal: killed"}} {
		p := startNicdiag(t, nil, "monitor", "--json", "--interval", "100ms", "--", "sh", "-c", tc.script)
		code, _ := p.wait(t, time.Now())
		want, sum := exitForSummary(t, lastLine(t, p.rest(), p.stderr.String()))
		c, _ := sum["command"].(map[string]any)
		if code != want || c == nil || c["exit_code"] != tc.code || c["error"] != tc.error {
			t.Errorf("%s: exit %d (want %d), summary command %v", tc.script, code, want, c)
		}
	}
}

// openPty returns a pseudo-terminal's master and slave.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skip(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skip(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// On a terminal, the command gets it: it reads the terminal (in a
// background group it would be stopped by SIGTTIN), and Ctrl-C reaches it
// as if run directly; the run then ends with it and nicdiag prints the
// verdict and exits per its findings.
func TestMonitorCommandTerminal(t *testing.T) {
	master, slave := openPty(t)
	mark := fmt.Sprintf("1000.%d7", os.Getpid())
	defer noneLeft(t, []string{mark})
	cmd := exec.Command(binary(t), "monitor", "--interval", "200ms", "--", "sh", "-c", "read x; echo got-$x; sleep "+mark)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	waited := make(chan struct{})
	var err error
	go func() { err = cmd.Wait(); close(waited) }()
	defer func() {
		select {
		case <-waited:
		default:
			cmd.Process.Kill()
			<-waited
		}
	}()
	var out safeBuffer
	go io.Copy(&out, master)
	// The terminal keeps the line until a reader takes it: the command,
	// once it has the terminal.
	if _, err := master.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if !waitUntil(20*time.Second, func() bool { return strings.Contains(out.String(), "got-hello") }) {
		t.Fatalf("the command did not read the terminal; output:\n%s", out.String())
	}
	if !waitUntil(20*time.Second, func() bool { return len(proctest.Sleeping(mark)) > 0 }) {
		t.Fatal("the command's sleep did not start")
	}
	start := time.Now()
	if _, err := master.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatalf("nicdiag still runs 10s after Ctrl-C; output:\n%s", out.String())
	}
	t.Logf("Ctrl-C on the terminal to exit: %v", time.Since(start))
	code := cmd.ProcessState.ExitCode()
	if code < exitOK || code > exitError {
		t.Errorf("exit %d (%v); want one per the findings; output:\n%s", code, err, out.String())
	}
	if !waitUntil(5*time.Second, func() bool { return strings.Contains(out.String(), "verdict:") }) {
		t.Errorf("no verdict after Ctrl-C; output:\n%s", out.String())
	}
}

// safeBuffer is a bytes.Buffer for one writer and other readers.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
