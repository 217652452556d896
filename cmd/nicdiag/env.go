package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/snapshot"
)

// env carries what every command needs: output streams and global flags.
type env struct {
	stdout, stderr io.Writer
	root           string // --root; "" is the live host
	json           bool
	tty            bool // stdout is a terminal
	// command holds the arguments after "--" (monitor's command to run);
	// nil when there was no "--".
	command []string
	// process is set when the env runs the nicdiag process itself (main),
	// not a test's run: commands may then change process-wide state (be a
	// child subreaper, hand the terminal to a command, end every child).
	process bool
	// environ is the environment for the commands nicdiag runs; nil: its
	// own.
	environ []string
	// cur is the command being run; set before it runs.
	cur *command

	mu        sync.Mutex      // guards the fields below: close may run on another goroutine
	tmp       *privateTemp    // the private TMPDIR, once tempDir made it
	swept     <-chan struct{} // closed when tempDir's sweep is over
	opening   *opening        // --root's opening, once asked for
	snap      *snapshot.Snapshot
	closers   []func() // run by close, last first
	closed    bool
	closeOnce sync.Once
}

// newEnv returns the env of one run writing to stdout and stderr.
func newEnv(stdout, stderr io.Writer) *env {
	return &env{stdout: stdout, stderr: stderr, tty: isTerminal(stdout)}
}

// tempDir returns the process's private TMPDIR, making it on first use
// and pointing TMPDIR at it, so that what a command unpacks or captures
// lies under one directory that runProcess removes however nicdiag ends;
// what a SIGKILL or a bounded removal at exit leaves there, a later
// nicdiag's first tempDir removes (privateTemp, sweepStale). Only a
// command that writes temporary files asks: making and removing the
// directory at every start cost list 6 % of its time. In a test's
// in-process run, or once nicdiag is exiting, or when it cannot be made,
// it is "" (the system's default).
func (e *env) tempDir() string {
	if !e.process {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tmp != nil || e.closed {
		return e.tmp.dirName()
	}
	t, err := makePrivateTemp()
	if err != nil {
		return ""
	}
	swept := make(chan struct{})
	go func() {
		sweepStale(filepath.Dir(t.dir), t.dir)
		close(swept)
	}()
	e.swept = swept
	e.environ = os.Environ() // the commands nicdiag runs keep the caller's TMPDIR
	e.tmp = t
	os.Setenv("TMPDIR", t.dir)
	return t.dir
}

// opening is the one opening of --root that an env's callers share.
type opening struct {
	done chan struct{} // closed once dir and err are set
	dir  string
	err  error
}

// openRoot returns the directory to read: "/" for the live host, or the
// snapshot directory (unpacking a .tar.gz). The first call opens it; a
// call meanwhile (another reader of the same command) waits for that one,
// or for its own ctx, so an archive is unpacked once. Call e.close when
// done.
func (e *env) openRoot(ctx context.Context) (string, error) {
	if e.root == "" {
		return "/", nil
	}
	e.mu.Lock()
	o := e.opening
	first := o == nil
	if first {
		o = &opening{done: make(chan struct{})}
		e.opening = o
	}
	e.mu.Unlock()
	if first {
		o.dir, o.err = e.openSnapshot(ctx)
		close(o.done)
	}
	select {
	case <-o.done:
		return o.dir, o.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// openSnapshot opens --root (see openRoot) and keeps it for close.
func (e *env) openSnapshot(ctx context.Context) (string, error) {
	var opts []snapshot.OpenOption
	if fi, err := os.Stat(e.root); err == nil && !fi.IsDir() {
		opts = append(opts, snapshot.WithTempDir(e.tempDir())) // an archive to unpack
	}
	s, err := snapshot.Open(ctx, e.root, opts...)
	if err != nil {
		return "", err
	}
	if err := fsroot.Check(s.Dir); errors.Is(err, fsroot.ErrNotRoot) {
		s.Close()
		return "", fmt.Errorf("--root %s: not a snapshot: it holds neither sys/ nor proc/ (write one with 'nicdiag snapshot -o FILE.tar.gz')", e.root)
	}
	e.mu.Lock()
	closed := e.closed
	if !closed {
		e.snap = s
	}
	e.mu.Unlock()
	if closed { // nicdiag is exiting (a signal): keep no temporary copy
		s.Close()
		return "", errors.New("nicdiag: exiting")
	}
	return s.Dir, nil
}

// onClose registers f to run at close, or runs it now when close has run.
func (e *env) onClose(f func()) {
	e.mu.Lock()
	if !e.closed {
		e.closers = append(e.closers, f)
		e.mu.Unlock()
		return
	}
	e.mu.Unlock()
	f()
}

// close runs what onClose registered, last first, then removes an
// unpacked snapshot's temporary copy and the private TMPDIR.
func (e *env) close() { e.shut(time.Time{}) }

// shut is close with the removal waited for until deadline at most (zero:
// until it is done): on the way out after a signal, a tree of many
// thousand entries takes seconds to remove, and what is left when the
// process exits, a later nicdiag removes. It runs once: the command's
// normal end and the signal watchdog of main may both call it, from
// different goroutines.
func (e *env) shut(deadline time.Time) {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.closed = true
		snap, closers, tmp, swept := e.snap, e.closers, e.tmp, e.swept
		e.mu.Unlock()
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		removed := make(chan struct{})
		go func() {
			if snap != nil {
				snap.Close()
			}
			tmp.remove()
			close(removed)
		}()
		if deadline.IsZero() {
			<-removed
			deadline = time.Now().Add(sweepWait)
		}
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		for removed != nil || swept != nil {
			select {
			case <-removed:
				removed = nil
			case <-swept:
				swept = nil
			case <-t.C:
				return
			}
		}
	})
}

// sweepWait bounds how long a nicdiag that ends as usual waits for its
// sweep of the private TMPDIRs that dead ones left (sweepStale): the next
// one goes on with what is left.
const sweepWait = 2 * time.Second

// fail prints err and returns exitFail.
func (e *env) fail(err error) int {
	return e.failHint(err, "")
}

// failLookup is fail for a command given the interfaces or PCI addresses
// names on the host at root: when one is unknown, it suggests the host's
// interface closest to it.
func (e *env) failLookup(ctx context.Context, root string, names []string, err error) int {
	if !errors.Is(err, nicinfo.ErrNoInterface) {
		return e.fail(err)
	}
	nics, lerr := nicinfo.List(ctx, option.Root(root))
	if lerr != nil {
		return e.fail(err)
	}
	known := map[string]bool{}
	var ifaces []string
	for _, n := range nics {
		known[n.Name] = true
		ifaces = append(ifaces, n.Name)
	}
	for _, name := range names {
		if known[name] || strings.Contains(name, ":") {
			continue // a known interface, or a PCI address
		}
		if hint := didYouMean(name, ifaces); hint != "" && strings.Contains(err.Error(), strconv.Quote(name)) {
			return e.failHint(err, hint)
		}
	}
	return e.fail(err)
}

// failHint prints err with hint (" (did you mean ...)") after it.
func (e *env) failHint(err error, hint string) int {
	msg := err.Error() + hint
	if !strings.HasPrefix(msg, "nicdiag") {
		msg = "nicdiag: " + msg
	}
	if errors.Is(err, nicinfo.ErrNoInterface) && !strings.Contains(msg, "nicdiag list") {
		msg += " (see 'nicdiag list --all')"
	}
	fmt.Fprintln(e.stderr, msg)
	return exitFail
}

// usageError prints what is wrong with a command's arguments, in one line,
// and where its help is, and returns exitFail.
func (e *env) usageError(cmd, msg string) int {
	fmt.Fprintf(e.stderr, "nicdiag %s: %s\nsee 'nicdiag help %s'\n", cmd, msg, cmd)
	return exitFail
}

// exitFor maps findings to the exit code of docs/design.md §3.
func exitFor(fs []finding.Finding) int {
	w, ok := finding.Worst(fs)
	switch {
	case !ok || w == finding.Info:
		return exitOK
	case w == finding.Warn:
		return exitWarn
	default:
		return exitError
	}
}
