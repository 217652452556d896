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
)

// The mutation sweep: each file of each bundled snapshot that `check`
// warns or errs on, damaged one at a time (missing, empty, cut to half,
// garbage; a symlink missing or dangling). Damage may change the verdict,
// but `check` may fall to exit 0 only with a nicdiag.incomplete finding
// that names the file it could not read: unknown never reads as healthy.
//
// A sample of sweepSample mutations of sweepSnaps snapshots, drawn with a
// fixed seed, runs in every test run; NICDIAG_SWEEP=full runs all of them
// (29,430 of 18 snapshots; some 15 minutes), before a release.
const (
	sweepSample = 48
	sweepSnaps  = 4
)

// mutation is one damage to one file of a snapshot copy.
type mutation struct {
	snap, file, kind string // file: slash-separated, relative to the root
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
	r, err := Check(context.Background(), WithRoot(root), WithPCIIDs("nicinfo/testdata/pci.ids"))
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
	if !full {
		r.Shuffle(len(dirs), func(i, j int) { dirs[i], dirs[j] = dirs[j], dirs[i] })
	}
	snapsRun, mutated := 0, 0
	var silent []string
	for _, d := range dirs {
		if !full && snapsRun == sweepSnaps {
			break
		}
		if fi, err := os.Stat(filepath.Join(d, "sys")); err != nil || !fi.IsDir() {
			continue // src/, README.md
		}
		_, base := sweepCheck(t, d)
		if base == 0 {
			continue // no verdict to lose
		}
		snapsRun++
		snap := filepath.Base(d)
		run := mutations(t, snap, d)
		if !full {
			r.Shuffle(len(run), func(i, j int) { run[i], run[j] = run[j], run[i] })
			run = run[:min(sweepSample/sweepSnaps, len(run))]
		}
		root := snaptest.Copy(t, d)
		for _, m := range run {
			undo := m.apply(t, root)
			rep, code := sweepCheck(t, root)
			undo()
			if code == 0 && (rep == nil || !namesFile(rep.Findings, m.file)) {
				silent = append(silent, fmt.Sprintf("%v: exit %d -> 0", m, base))
			}
		}
		mutated += len(run)
	}
	t.Logf("%d mutations of %d snapshots that warn or err", mutated, snapsRun)
	if snapsRun < min(sweepSnaps, 5) {
		t.Fatalf("only %d bundled snapshots warn or err", snapsRun)
	}
	slices.Sort(silent)
	for _, s := range silent {
		t.Errorf("%s without a nicdiag.incomplete finding naming the file", s)
	}
}
