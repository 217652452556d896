package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

var versionCmd = &command{
	name:    "version",
	summary: "the build (module version, VCS revision, Go) and the pci.ids in use",
	help: `Prints nicdiag's module version (as 'go install ...@VERSION' stamps it;
"(devel)" for a build from a clone), the VCS revision and whether the tree was
modified when the build records them, the Go version it was built with, and the
pci.ids file device names come from (with its version and date): the
snapshot's own under --root, else the host's. 'nicdiag --version' is the same.

Examples:
  nicdiag version
  nicdiag --version --json`,
	bind: noFlags(runVersion),
}

// versionJSON is the document of `version --json`.
type versionJSON struct {
	Schema    string `json:"schema"`
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"revision_time,omitempty"`
	Modified  *bool  `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	// PCIIDs is the pci.ids file in use; nil with PCIIDsError set when none
	// was found.
	PCIIDs      *nicinfo.PCIIDsFile `json:"pci_ids,omitempty"`
	PCIIDsError string              `json:"pci_ids_error,omitempty"`
}

// buildVersion reads what the Go toolchain recorded in the binary.
func buildVersion() versionJSON {
	bi, _ := debug.ReadBuildInfo()
	return versionFrom(bi)
}

// versionFrom is the version document for build info bi (nil when the
// binary carries none).
func versionFrom(bi *debug.BuildInfo) versionJSON {
	v := versionJSON{Schema: jsonSchema, Version: "(unknown)", GoVersion: runtime.Version()}
	if bi == nil {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			m := s.Value == "true"
			v.Modified = &m
		}
	}
	return v
}

func runVersion(ctx context.Context, e *env, _ *flag.FlagSet, args []string) int {
	if len(args) > 0 {
		return e.usageError("version", fmt.Sprintf("unexpected argument %q", args[0]))
	}
	v := buildVersion()
	var opts []nicinfo.Option
	if e.root != "" {
		root, err := e.openRoot(ctx)
		if err != nil {
			return e.fail(err)
		}
		opts = append(opts, option.Root(root))
	}
	if f, err := nicinfo.FindPCIIDs(opts...); err != nil {
		v.PCIIDsError = err.Error()
	} else {
		v.PCIIDs = &f
	}
	if e.json {
		if err := e.writeJSON(v); err != nil {
			return e.fail(err)
		}
		return exitOK
	}
	w := e.stdout
	fmt.Fprintf(w, "nicdiag %s\n", v.Version)
	if v.Revision != "" {
		mod := ""
		if v.Modified != nil && *v.Modified {
			mod = " (modified)"
		}
		when := ""
		if v.Time != "" {
			when = ", " + v.Time
		}
		fmt.Fprintf(w, "revision: %s%s%s\n", v.Revision, when, mod)
	}
	fmt.Fprintf(w, "go:       %s\n", v.GoVersion)
	switch {
	case v.PCIIDs == nil:
		fmt.Fprintf(w, "pci.ids:  none (%s)\n", v.PCIIDsError)
	default:
		about := ""
		switch {
		case v.PCIIDs.Version != "" && v.PCIIDs.Date != "":
			about = fmt.Sprintf(" (version %s, %s)", v.PCIIDs.Version, v.PCIIDs.Date)
		case v.PCIIDs.Date != "":
			about = fmt.Sprintf(" (%s)", v.PCIIDs.Date)
		case v.PCIIDs.Version != "":
			about = fmt.Sprintf(" (version %s)", v.PCIIDs.Version)
		}
		fmt.Fprintf(w, "pci.ids:  %s%s\n", v.PCIIDs.Path, about)
	}
	return exitOK
}
