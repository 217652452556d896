package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nicdiag/nicdiag/snapshot"
)

var snapshotCmd = &command{
	name:    "snapshot",
	args:    "-o FILE.tar.gz",
	summary: "write a snapshot of this host for offline analysis",
	help: `Capture what every nicdiag command reads (the netdevs and PCI functions in
sysfs with their symlinks, config space as far as it is readable, /proc's
interrupt and CPU files, and each interface's ethtool answers) into a .tar.gz,
or into a directory when FILE does not end in .tar.gz or .tgz. Run it as root
for full PCI config space. Read it back anywhere with --root.

Examples:
  sudo nicdiag snapshot -o host.tar.gz
  nicdiag --root host.tar.gz list`,
	bind: func(fs *flag.FlagSet) runFunc {
		out := fs.String("o", "", "output `FILE` (.tar.gz) or directory")
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
	var opts []snapshot.CaptureOption
	if e.root != "" {
		root, err := e.openRoot(ctx)
		if err != nil {
			return e.fail(err)
		}
		opts = append(opts, snapshot.FromRoot(root))
	}
	var m *snapshot.Manifest
	var err error
	if strings.HasSuffix(out, ".tar.gz") || strings.HasSuffix(out, ".tgz") {
		m, err = writeArchive(ctx, out, opts)
	} else {
		if ents, rerr := os.ReadDir(out); rerr == nil && len(ents) > 0 {
			return e.fail(errors.New("snapshot: " + out + " is not empty"))
		}
		m, err = snapshot.Capture(ctx, out, opts...)
	}
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		if err := e.writeJSON(struct {
			Schema   string             `json:"schema"`
			File     string             `json:"file"`
			Manifest *snapshot.Manifest `json:"manifest"`
		}{jsonSchema, out, m}); err != nil {
			return e.fail(err)
		}
		return exitOK
	}
	fmt.Fprintf(e.stdout, "wrote %s: %d interfaces (%s)", out, len(m.Interfaces), strings.Join(m.Interfaces, " "))
	if len(m.Skipped) > 0 {
		fmt.Fprintf(e.stdout, "; %d files unreadable, listed in nicdiag-snapshot.json", len(m.Skipped))
	}
	if !m.Root {
		fmt.Fprint(e.stdout, "; not root: PCI config space holds 64 bytes per function")
	}
	fmt.Fprintln(e.stdout)
	return exitOK
}

// writeArchive writes to a temporary file next to out and renames it, so a
// failed capture leaves no half archive.
func writeArchive(ctx context.Context, out string, opts []snapshot.CaptureOption) (*snapshot.Manifest, error) {
	f, err := os.CreateTemp(filepath.Dir(out), ".nicdiag-snapshot-*")
	if err != nil {
		// The error names the temporary file; say what the user asked for.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("snapshot: cannot write %s: %w", out, err)
	}
	defer os.Remove(f.Name())
	m, err := snapshot.CaptureArchive(ctx, f, opts...)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return nil, err
	}
	return m, os.Rename(f.Name(), out)
}
