package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nicdiag/nicdiag/internal/atomicfile"
	"github.com/nicdiag/nicdiag/snapshot"
)

var snapshotCmd = &command{
	name:    "snapshot",
	args:    "-o FILE.tar.gz",
	summary: "write a snapshot of this host for offline analysis",
	help: `Capture what every nicdiag command reads (the netdevs and PCI functions in
sysfs with their symlinks, config space as far as it is readable, /proc's
interrupt and CPU files, and each interface's ethtool answers) into a .tar.gz,
to standard output as a .tar.gz with -o -, or into a directory when FILE does
not end in .tar.gz or .tgz. Other archive names (.tar, .tar.xz, .zip, ...) are
refused: --root reads .tar.gz and directories only. With -o - the summary goes
to standard error. Run it as root for full PCI config space. Read it back
anywhere with --root.

With --root, the snapshot read may be hostile, and what is copied is bounded:
FIFOs and devices are never opened, a file over 64 MiB or a symlink leaving
the root is skipped (each listed in nicdiag-snapshot.json), and more than
200000 files or 256 MiB in all (4 KiB charged to each file, directory and
symlink besides its bytes) is refused. A .tar.gz given to --root is held
to the same caps before anything is unpacked.

Examples:
  sudo nicdiag snapshot -o host.tar.gz
  sudo nicdiag snapshot -o - | ssh lab 'cat > host.tar.gz'
  nicdiag --root host.tar.gz list`,
	bind: func(fs *flag.FlagSet) runFunc {
		out := fs.String("o", "", "output `FILE` (.tar.gz), directory, or - for a .tar.gz on standard output")
		return func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) int {
			return runSnapshot(ctx, e, fs, args, *out)
		}
	},
}

// runSnapshot writes a snapshot to out (-o).
func runSnapshot(ctx context.Context, e *env, fs *flag.FlagSet, args []string, out string) int {
	if out == "" || len(args) > 0 {
		return e.usageError("snapshot", "need -o FILE.tar.gz and no other arguments")
	}
	e.tempDir() // capture packs under TMPDIR: the private one
	var opts []snapshot.CaptureOption
	if e.root != "" {
		root, err := e.openRoot(ctx)
		if err != nil {
			return e.fail(err)
		}
		opts = append(opts, snapshot.FromRoot(root))
	}
	if ext := otherArchive(out); ext != "" {
		return e.usageError("snapshot", fmt.Sprintf("-o %s: nicdiag writes .tar.gz archives only (--root reads .tar.gz and directories); name it %s.tar.gz, or stream one with -o -", out, strings.TrimSuffix(out, ext)))
	}
	var m *snapshot.Manifest
	var err error
	report := e.stdout
	switch {
	case out == "-":
		if e.tty {
			return e.usageError("snapshot", "-o -: standard output is a terminal; redirect it to a file or a pipe")
		}
		m, err = snapshot.CaptureArchive(ctx, e.stdout, opts...)
		report = e.stderr
	case strings.HasSuffix(out, ".tar.gz") || strings.HasSuffix(out, ".tgz"):
		m, err = writeArchive(ctx, out, opts)
	default:
		if ents, rerr := os.ReadDir(out); rerr == nil && len(ents) > 0 {
			return e.fail(errors.New("snapshot: " + out + " is not empty"))
		}
		m, err = snapshot.Capture(ctx, out, opts...)
	}
	if err != nil {
		return e.fail(err)
	}
	if out == "-" {
		out = "standard output"
	}
	if e.json {
		if err := e.writeJSONTo(report, struct {
			Schema   string             `json:"schema"`
			File     string             `json:"file"`
			Manifest *snapshot.Manifest `json:"manifest"`
		}{jsonSchema, out, m}); err != nil {
			return e.fail(err)
		}
		return exitOK
	}
	fmt.Fprintf(report, "wrote %s: %d interfaces (%s)", out, len(m.Interfaces), strings.Join(m.Interfaces, " "))
	if len(m.Skipped) > 0 {
		fmt.Fprintf(report, "; %d files unreadable or refused, listed in nicdiag-snapshot.json", len(m.Skipped))
	}
	if !m.Root {
		fmt.Fprint(report, "; not root: PCI config space holds 64 bytes per function")
	}
	fmt.Fprintln(report)
	return exitOK
}

// otherArchive returns the archive extension of name when it is one that
// nicdiag does not write (.tar, .tar.xz, .zip, ...), else "".
func otherArchive(name string) string {
	low := strings.ToLower(name)
	for _, ext := range []string{".tar.xz", ".tar.bz2", ".tar.zst", ".tar.lz4", ".tar", ".txz", ".tbz2", ".tbz", ".tzst", ".zip", ".gz", ".xz", ".zst", ".bz2"} {
		if strings.HasSuffix(low, ext) && !strings.HasSuffix(low, ".tar.gz") {
			return name[len(name)-len(ext):]
		}
	}
	return ""
}

// writeArchive writes to a temporary file next to out and renames it, so a
// failed capture leaves no half archive.
func writeArchive(ctx context.Context, out string, opts []snapshot.CaptureOption) (*snapshot.Manifest, error) {
	var m *snapshot.Manifest
	var cerr error
	err := atomicfile.Write(out, 0o644, func(w io.Writer) error {
		m, cerr = snapshot.CaptureArchive(ctx, w, opts...)
		return cerr
	})
	switch {
	case cerr != nil:
		return nil, cerr // the capture's error says what failed
	case err != nil:
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return m, nil
}
