// Command nicdiag inspects the network cards of a Linux host and explains why
// a network benchmark hits a ceiling: the PCIe path, the device's identity,
// and the per-core interrupt load.
//
// Exit codes: 0 no finding at warn or above, 1 a finding at warn, 2 a finding
// at error, 3 nicdiag itself failed (including bad usage).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

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

// command is one subcommand.
type command struct {
	name    string
	args    string // argument synopsis
	summary string // one line for the command list
	help    string // what it does, with an example
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
	snap    *snapshot.Snapshot
}

// openRoot returns the directory to read: "/" for the live host, or the
// snapshot directory (unpacking a .tar.gz). Call e.close when done.
func (e *env) openRoot(ctx context.Context) (string, error) {
	if e.root == "" {
		return "/", nil
	}
	if e.snap == nil {
		s, err := snapshot.Open(ctx, e.root)
		if err != nil {
			return "", err
		}
		if err := fsroot.Check(s.Dir); errors.Is(err, fsroot.ErrNotRoot) {
			s.Close()
			return "", fmt.Errorf("--root %s: not a snapshot: it holds neither sys/ nor proc/ (write one with 'nicdiag snapshot -o FILE.tar.gz')", e.root)
		}
		e.snap = s
	}
	return e.snap.Dir, nil
}

func (e *env) close() {
	if e.snap != nil {
		e.snap.Close()
	}
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C ends nicdiag at once
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it parses args and runs a command.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, tty: isTerminal(stdout)}
	defer e.close()

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
	return longFlag.ReplaceAllString(err.Error(), "$1--$2")
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
	fmt.Fprintf(w, "Exit codes: 0 no finding at warn or above, 1 warn, 2 error, 3 nicdiag failed.\n")
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
