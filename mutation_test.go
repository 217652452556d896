package nicdiag

import (
	"context"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
)

// The mutation sweep: each file of each bundled snapshot that `check`
// warns or errs on, damaged one at a time (missing, empty, cut to half,
// garbage; a symlink missing or dangling). Damage may change the verdict,
// but `check` may fall to exit 0 only with a nicdiag.incomplete finding
// that names the file it could not read: unknown never reads as healthy.
//
// A sample of sweepSample mutations of sweepSnaps snapshots, drawn with a
// fixed seed, runs in every test run; NICDIAG_SWEEP=full runs all of them
// (29,430 of 18 snapshots; 17 minutes on a loaded 2-core VM), before a
// release.
const (
	sweepSample = 48
	sweepSnaps  = 4
)

// sweepFound are mutations the full sweep found silent (exit 1 or 2 to 0,
// nothing said), each since fixed: every run checks them.
var sweepFound = []mutation{
	{"82576-minipcie-x1", "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.1/class", "truncated"}, // a sibling's class "0x02": pcie.bottleneck gone
	{"ar8151-desktop", "sys/class/net/enp3s0", "dangling"},                                       // the interface's sysfs gone, ethtool's bus-info kept it on PCI
	{"i219-optiplex", "sys/class/net/eno1", "dangling"},                                          // the interface vanished
	{"e1000e-10gclaim", "sys/class/net/eth0", "missing"},                                         // checked as a function without a netdev
	{"virtio-kvm", "sys/class/net/eth0", "missing"},                                              // the netdev under virtio0 unlisted
	{"rtl8156-cdc-ncm", "sys/class/net/eth1", "missing"},                                         // a USB NIC: only ethtool/eth1.json tells
	{"rtl8156-cdc-ncm", "sys/devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0/usb2/2-1/2-1:2.0/net/eth1/device", "missing"}, // read as a software interface
	{"tb3-25g-enclosure", "sys/devices/pci0000:00/0000:00:1c.4/config", "garbage"},                                                                 // the root port's capabilities unknown
	{"x722-lewisburg-uplink-x4", "sys/devices/pci0000:b2/0000:b2:00.0/config", "garbage"},                                                          // the downgrade gone
}

// mutation is one damage to one file of a snapshot copy.
type mutation struct {
	snap, file, kind string // file: slash-separated, relative to the root
}

// foundIn returns sweepFound's mutations of snap, none in a full sweep
// (which runs them anyway).
func foundIn(snap string, full bool) []mutation {
	var out []mutation
	for _, m := range sweepFound {
		if m.snap == snap && !full {
			out = append(out, m)
		}
	}
	return out
}

func (m mutation) String() string { return m.snap + ": " + m.file + " " + m.kind }

var (
	fileKinds = []string{"missing", "empty", "truncated", "garbage"}
	linkKinds = []string{"missing", "dangling"}
)

// exitCode is `check`'s exit code for fs (cmd/nicdiag's exitFor).
func exitCode(fs []finding.Finding) int {
	w, ok := finding.Worst(fs)
	switch {
	case !ok || w == finding.Info:
		return 0
	case w == finding.Warn:
		return 1
	}
	return 2
}

func sweepCheck(t *testing.T, root string) (*Report, int) {
	t.Helper()
	r, err := Check(context.Background(), option.Root(root), WithPCIIDs("nicinfo/testdata/pci.ids"))
	if err != nil {
		return nil, 3 // nicdiag failed: not a silent 0
	}
	return r, exitCode(r.Findings)
}

// mutations lists every mutation of the snapshot at dir, sorted.
func mutations(t *testing.T, snap, dir string) []mutation {
	var out []mutation
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "README.md" {
			return nil // not read: the tree's source and reconstructions
		}
		kinds := fileKinds
		if d.Type()&fs.ModeSymlink != 0 {
			kinds = linkKinds
		}
		for _, k := range kinds {
			out = append(out, mutation{snap, rel, k})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// apply damages m.file under root and returns the function that undoes it.
func (m mutation) apply(t *testing.T, root string) (undo func()) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(m.file))
	if target, err := os.Readlink(p); err == nil {
		must(t, os.Remove(p))
		if m.kind == "dangling" {
			must(t, os.Symlink(target+"-gone", p))
		}
		return func() { os.Remove(p); must(t, os.Symlink(target, p)) }
	}
	orig, err := os.ReadFile(p)
	must(t, err)
	switch m.kind {
	case "missing":
		must(t, os.Remove(p))
	case "empty":
		must(t, os.WriteFile(p, nil, 0o644))
	case "truncated":
		must(t, os.WriteFile(p, orig[:len(orig)/2], 0o644))
	case "garbage":
		h := fnv.New64a()
		h.Write([]byte(m.file))
		r := rand.New(rand.NewPCG(h.Sum64(), 27))
		g := make([]byte, max(len(orig), 16))
		for i := range g {
			g[i] = byte(r.Uint32())
		}
		must(t, os.WriteFile(p, g, 0o644))
	}
	return func() { must(t, os.WriteFile(p, orig, 0o644)) }
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// namesFile reports whether an incomplete finding in fs names file: its
// kernel path, or its last two elements (the path read may have gone
// through a symlink to it).
func namesFile(fs []finding.Finding, file string) bool {
	tail := "/" + file
	if i := strings.LastIndex(file, "/"); i >= 0 {
		if j := strings.LastIndex(file[:i], "/"); j >= 0 {
			tail = file[j:]
		}
	}
	for _, f := range fs {
		if f.Code != finding.NicdiagIncomplete {
			continue
		}
		text := f.Summary
		for _, v := range f.Evidence {
			text += " " + v
		}
		if strings.Contains(text, "/"+file) || strings.Contains(text, tail) {
			return true
		}
	}
	return false
}

func TestMutationSweep(t *testing.T) {
	full := os.Getenv("NICDIAG_SWEEP") == "full"
	dirs, err := filepath.Glob(snaps + "*")
	must(t, err)
	r := rand.New(rand.NewPCG(27, 5))
	r.Shuffle(len(dirs), func(i, j int) { dirs[i], dirs[j] = dirs[j], dirs[i] })
	sampled, mutated := 0, 0
	var silent []string
	for _, d := range dirs {
		snap := filepath.Base(d)
		found := foundIn(snap, full)
		if fi, err := os.Stat(filepath.Join(d, "sys")); err != nil || !fi.IsDir() || !full && sampled == sweepSnaps && len(found) == 0 {
			continue // src/, README.md; or no more to sample
		}
		_, base := sweepCheck(t, d)
		if base == 0 {
			continue // no verdict to lose
		}
		var run []mutation
		if full || sampled < sweepSnaps {
			run = mutations(t, snap, d)
			if !full {
				r.Shuffle(len(run), func(i, j int) { run[i], run[j] = run[j], run[i] })
				run = run[:min(sweepSample/sweepSnaps, len(run))]
				sampled++
			}
		}
		run = append(run, found...)
		silent = append(silent, sweep(t, d, base, run)...)
		mutated += len(run)
	}
	t.Logf("%d mutations (%d sampled snapshots, and those sweepFound names)", mutated, sampled)
	if mutated < sweepSample {
		t.Fatalf("only %d mutations: too few bundled snapshots warn or err", mutated)
	}
	slices.Sort(silent)
	for _, s := range silent {
		t.Errorf("%s without a nicdiag.incomplete finding naming the file", s)
	}
}

// sweep applies each mutation of run to a copy of the snapshot at dir,
// whose check exits base, one at a time, and returns those that made
// check exit 0 without naming the file.
func sweep(t *testing.T, dir string, base int, run []mutation) []string {
	root := snaptest.Copy(t, dir)
	var silent []string
	for _, m := range run {
		undo := m.apply(t, root)
		rep, code := sweepCheck(t, root)
		undo()
		if code == 0 && (rep == nil || !namesFile(rep.Findings, m.file)) {
			silent = append(silent, fmt.Sprintf("%v: exit %d -> 0", m, base))
		}
	}
	return silent
}
