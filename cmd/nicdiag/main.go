// Command nicdiag inspects the network cards of a Linux host and explains why
// a network benchmark hits a ceiling: the PCIe path, the device's identity,
// and the per-core interrupt load.
//
// Exit codes: 0 no finding at warn or above, 1 a finding at warn, 2 a finding
// at error, 3 nicdiag itself failed (including bad usage), 130 or 143 (128 +
// the signal's number) when SIGINT or SIGTERM ended it, 141 when its output
// pipe was closed (see runProcess).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/snapshot"
)

// Exit codes (docs/design.md §3).
const (
	exitOK    = 0
	exitWarn  = 1
	exitError = 2
	exitFail  = 3
)

// signalGrace is how long a command has to return after the first SIGINT
// or SIGTERM before nicdiag cleans up and exits 128+signal regardless.
const signalGrace = 1500 * time.Millisecond

// command is one subcommand.
type command struct {
	name    string
	args    string // argument synopsis
	summary string // one line for the command list
	help    string // what it does, with an example
	// signalEnds marks a command that a SIGINT or SIGTERM ends as usual
	// (monitor prints its verdict, serve shuts down): its exit code stands
	// when it returns within signalGrace. Any other command cut short by a
	// signal exits 128+signal.
	signalEnds bool
	// buffered marks a command that writes its report once, at the end:
	// its standard output is collected and written in one write, not one
	// per table cell (list wrote 39 times for five lines).
	buffered bool
	// bind registers the command's own flags on fs, a fresh flag set for
	// each invocation, into values of its own, and returns the function
	// that runs the command with them once fs is parsed. Flag values live
	// in that closure, never in package variables.
	bind func(fs *flag.FlagSet) runFunc
}

// runFunc runs a command with its positional arguments and returns the
// exit code.
type runFunc func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) int

// noFlags binds a command that has only the global flags.
func noFlags(run runFunc) func(*flag.FlagSet) runFunc {
	return func(*flag.FlagSet) runFunc { return run }
}

var commands []*command

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func init() {
	commands = []*command{listCmd, showCmd, checkCmd, explainCmd, monitorCmd, snapshotCmd, serveCmd, reportCmd, versionCmd, completionCmd, manCmd}
}

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

	mu        sync.Mutex // guards the fields below: close may run on another goroutine
	tmp       string     // the private TMPDIR, once tempDir made it
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
// lies under one directory that runProcess removes however nicdiag ends.
// Only a command that writes temporary files asks: making and removing
// the directory at every start cost list 6 % of its time. In a test's
// in-process run, or once nicdiag is exiting, or when it cannot be made,
// it is "" (the system's default).
func (e *env) tempDir() string {
	if !e.process {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tmp != "" || e.closed {
		return e.tmp
	}
	dir, err := os.MkdirTemp("", "nicdiag-")
	if err != nil {
		return ""
	}
	e.environ = os.Environ() // the commands nicdiag runs keep the caller's TMPDIR
	e.tmp = dir
	os.Setenv("TMPDIR", dir)
	return dir
}

// removeTemp removes the private TMPDIR, if one was made.
func (e *env) removeTemp() {
	e.mu.Lock()
	dir := e.tmp
	e.mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// openRoot returns the directory to read: "/" for the live host, or the
// snapshot directory (unpacking a .tar.gz). Call e.close when done.
func (e *env) openRoot(ctx context.Context) (string, error) {
	if e.root == "" {
		return "/", nil
	}
	e.mu.Lock()
	s := e.snap
	e.mu.Unlock()
	if s == nil {
		var opts []snapshot.OpenOption
		if fi, err := os.Stat(e.root); err == nil && !fi.IsDir() {
			opts = append(opts, snapshot.WithTempDir(e.tempDir())) // an archive to unpack
		}
		var err error
		s, err = snapshot.Open(ctx, e.root, opts...)
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

// close removes an unpacked snapshot's temporary copy and runs what
// onClose registered. It runs once: the command's normal end and the
// signal watchdog of main may both call it, from different goroutines.
func (e *env) close() {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.closed = true
		snap, closers := e.snap, e.closers
		e.mu.Unlock()
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		if snap != nil {
			snap.Close()
		}
	})
}

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
	nics, lerr := nicinfo.List(ctx, nicinfo.WithRoot(root))
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

func main() {
	os.Exit(runProcess(os.Args[1:], os.Stdout, os.Stderr))
}

// signalCause is the cause of the context of a run a signal interrupted:
// monitor.Run passes the signal it names on to its command.
type signalCause struct{ sig syscall.Signal }

func (c signalCause) Error() string     { return "nicdiag: " + c.sig.String() }
func (c signalCause) Signal() os.Signal { return c.sig }

// runProcess runs nicdiag as a process and returns its exit code. The
// command runs on a goroutine of its own, with a private TMPDIR once it
// asks for one (env.tempDir), so that whatever it unpacks or captures lies
// under one directory. The first
// SIGINT or SIGTERM cancels its context; if it has not returned
// signalGrace later, or at a second signal, runProcess cleans up at once
// (env.close: temporary files, the processes a command started) and returns
// 128+signal, whatever the command is blocked on. A command that returns
// in time after a signal gets 128+signal too, unless a signal is its
// ordinary end (command.signalEnds).
//
// A SIGPIPE from standard output or error (a reader that went away: "|
// head") ends nicdiag at once with 141 (128 + SIGPIPE), cleaned up, where
// the signal would have killed it with its files left behind. A SIGPIPE
// from anything else (a scraper gone from serve's socket) only fails that
// write.
func runProcess(args []string, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)

	e := newEnv(stdout, stderr)
	e.process = true // the private TMPDIR is made when first asked for (env.tempDir)
	cleanup := sync.OnceFunc(func() {
		e.close()
		e.removeTemp()
	})
	done := make(chan int, 1)
	go func() {
		growStack()
		done <- e.run(ctx, args)
	}()

	var first syscall.Signal
	var grace <-chan time.Time
	for {
		select {
		case code := <-done:
			cleanup()
			if first != 0 && (e.cur == nil || !e.cur.signalEnds) {
				return 128 + int(first)
			}
			return code
		case s := <-sigs:
			sig, _ := s.(syscall.Signal)
			if sig == syscall.SIGPIPE {
				if !brokenOutput() {
					continue
				}
				cleanup()
				return 128 + int(sig)
			}
			if first != 0 { // a second signal: at once
				cleanup()
				return 128 + int(sig)
			}
			first = sig
			cancel(signalCause{sig})
			grace = time.After(signalGrace)
		case <-grace:
			cleanup()
			return 128 + int(first)
		}
	}
}

// growStack grows the calling goroutine's stack to what a command needs
// in one step. A new goroutine starts with 8 KiB, and each doubling on
// the way up copies every frame on it (list grew its stack five times,
// ~5 % of its run in runtime.newstack under perf).
//
//go:noinline
func growStack() {
	var b [64 << 10]byte
	stackSink(b[:])
}

//go:noinline
func stackSink(b []byte) { b[len(b)-1] = 1 }

// brokenOutput reports whether standard output or error leads nowhere any
// more: a pipe or socket whose reader has gone.
func brokenOutput() bool {
	fds := []unix.PollFd{{Fd: 1, Events: unix.POLLOUT}, {Fd: 2, Events: unix.POLLOUT}}
	if n, err := unix.Poll(fds, 0); err != nil || n == 0 {
		return false
	}
	for _, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}

// run is main without the process: it parses args and runs a command, as
// tests do in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := newEnv(stdout, stderr)
	defer e.close()
	return e.run(ctx, args)
}

// run parses args and runs a command.
func (e *env) run(ctx context.Context, args []string) int {
	stdout, stderr := e.stdout, e.stderr
	global, showVersion := globalFlagSet(e)
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return exitOK
		}
		fmt.Fprintf(stderr, "nicdiag: %s\nsee 'nicdiag help'\n", flagError(err))
		return exitFail
	}
	rest := global.Args()
	if *showVersion {
		fs, runCmd := newFlagSet(versionCmd, e, stderr)
		return runCmd(ctx, e, fs, rest)
	}
	if len(rest) == 0 {
		usage(stderr)
		return exitFail
	}
	name := rest[0]
	if name == "help" {
		if len(rest) > 1 {
			c := lookup(rest[1])
			if c == nil {
				fmt.Fprintf(stderr, "nicdiag help: unknown command %q%s\nsee 'nicdiag help'\n", rest[1], didYouMean(rest[1], commandWords()))
				return exitFail
			}
			fs, _ := newFlagSet(c, e, stdout)
			fs.SetOutput(stdout)
			fs.Usage()
			return exitOK
		}
		usage(stdout)
		return exitOK
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(stderr, "nicdiag: unknown command %q%s\nsee 'nicdiag help'\n", name, didYouMean(name, append(commandWords(), "help")))
		return exitFail
	}
	fs, runCmd := newFlagSet(c, e, stderr)
	printUsage := fs.Usage
	fs.Usage = func() {}
	fs.SetOutput(io.Discard) // the parse error is reported below, in one line
	args, command, err := parseInterspersed(fs, rest[1:])
	fs.SetOutput(stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			printUsage()
			return exitOK
		}
		return e.usageError(c.name, flagError(err))
	}
	fs.Usage = printUsage
	e.command = command
	e.cur = c
	if c.buffered {
		var buf bytes.Buffer
		out := e.stdout
		e.stdout = &buf
		defer func() {
			e.stdout = out
			out.Write(buf.Bytes()) // a failed write is the reader's to see; SIGPIPE ends the process
		}()
	}
	return runCmd(ctx, e, fs, args)
}

// commandWords are the names of the commands in the table.
func commandWords() []string {
	out := make([]string, len(commands))
	for i, c := range commands {
		out[i] = c.name
	}
	return out
}

// flagError rewrites a flag package error as the help text writes flags.
func flagError(err error) string {
	return longFlags(err.Error())
}

// parseInterspersed parses flags wherever they stand among the arguments
// ("show eth0 --json" as well as "show --json eth0") and returns the
// positional arguments and those after a "--" terminator (nil without one).
func parseInterspersed(fs *flag.FlagSet, args []string) (pos, command []string, err error) {
	pos = []string{}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return pos, rest, nil
		}
		if len(rest) == 0 {
			return pos, nil, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// globalFlagSet is the flag set before the command name: the global flags
// and --version.
func globalFlagSet(e *env) (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("nicdiag", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addGlobal(fs, e)
	v := fs.Bool("version", false, "print the version and exit (as 'nicdiag version')")
	fs.Usage = func() {}
	return fs, v
}

// addGlobal registers the flags every command accepts, before or after the
// command name.
func addGlobal(fs *flag.FlagSet, e *env) {
	fs.StringVar(&e.root, "root", e.root, "read the snapshot at `PATH` (directory or .tar.gz) instead of the live host")
	fs.BoolVar(&e.json, "json", e.json, "write JSON instead of text")
}

// newFlagSet returns a fresh flag set for one invocation of c, with the
// global flags and c's own, and the function that runs c with their values.
func newFlagSet(c *command, e *env, out io.Writer) (*flag.FlagSet, runFunc) {
	fs := flag.NewFlagSet("nicdiag "+c.name, flag.ContinueOnError)
	fs.SetOutput(out)
	addGlobal(fs, e)
	run := c.bind(fs)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s\n\n%s\n\nflags:\n", c.synopsis(), strings.TrimSpace(c.help))
		for _, d := range flagDocs(fs) {
			fmt.Fprintf(w, "  %s%s\n        %s%s\n", d.flag, d.arg, d.usage, d.def)
		}
	}
	return fs, run
}

// synopsis is the command's usage line: "nicdiag show [flags] IFACE".
func (c *command) synopsis() string {
	return strings.TrimSpace("nicdiag " + c.name + " [flags] " + c.args)
}

// flagDoc is one flag as the help text, the man page and the shell
// completions describe it.
type flagDoc struct {
	name  string // without dashes
	flag  string // "--root", or "-o" (as the help text writes a one-letter flag)
	arg   string // " PATH", or "" for a boolean flag
	usage string
	def   string // " (default 1518)", or ""
	bool  bool
}

// flagDocs describes every flag of fs, sorted by name.
func flagDocs(fs *flag.FlagSet) []flagDoc {
	var out []flagDoc
	fs.VisitAll(func(f *flag.Flag) {
		name, u := flag.UnquoteUsage(f)
		d := flagDoc{name: f.Name, flag: "--" + f.Name, usage: u}
		if name != "" {
			d.arg = " " + name
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			d.bool = true
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			d.def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		if len(f.Name) == 1 {
			d.flag = "-" + f.Name
		}
		out = append(out, d)
	})
	return out
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "nicdiag: inspect network cards and explain throughput ceilings\n\nusage: nicdiag [--root PATH] [--json] [--version] COMMAND [ARGS]\n\ncommands:\n")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'nicdiag help COMMAND' or 'nicdiag COMMAND --help' for details and examples.\n")
	fmt.Fprintf(w, "Exit codes: 0 no finding at warn or above, 1 warn, 2 error, 3 nicdiag failed,\n130/143 ended by SIGINT/SIGTERM, 141 output pipe closed.\n")
}

// isTerminal reports whether w is a terminal (not merely a character device
// such as /dev/null).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
