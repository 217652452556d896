package main

// The command table, argument parsing and the help texts.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

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
