package nicdiag

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// tree is a copy of a bundled snapshot that a test changes: each variant's
// doc comment states what was changed from the captured or generated tree.
type tree struct {
	t   *testing.T
	dir string
}

// variant copies testdata/snapshots/snap.
func variant(t *testing.T, snap string) tree {
	t.Helper()
	return tree{t, snaptest.Copy(t, snaps+snap)}
}

// ethtool edits iface's ethtool/IFACE.json.
func (v tree) ethtool(iface string, edit func(a *nicinfo.EthtoolAnswers)) tree {
	v.t.Helper()
	p := filepath.Join(v.dir, "ethtool", iface+".json")
	var a nicinfo.EthtoolAnswers
	b, err := os.ReadFile(p)
	if err != nil {
		v.t.Fatal(err)
	}
	if err := json.Unmarshal(b, &a); err != nil {
		v.t.Fatal(err)
	}
	edit(&a)
	if b, err = json.Marshal(a); err != nil {
		v.t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		v.t.Fatal(err)
	}
	return v
}

// files adds or replaces files (snaptest.Add).
func (v tree) files(files map[string]string) tree {
	v.t.Helper()
	snaptest.Add(v.t, v.dir, files)
	return v
}

// remove deletes paths (files or directories) under the tree; a path
// through a symlinked directory is resolved first.
func (v tree) remove(paths ...string) tree {
	v.t.Helper()
	for _, p := range paths {
		full := filepath.Join(v.dir, filepath.FromSlash(p))
		if real, err := filepath.EvalSymlinks(filepath.Dir(full)); err == nil {
			full = filepath.Join(real, filepath.Base(full))
		}
		if err := os.RemoveAll(full); err != nil {
			v.t.Fatal(err)
		}
	}
	return v
}

// dropLines removes the lines of file that contain any of subs.
func (v tree) dropLines(file string, subs ...string) tree {
	v.t.Helper()
	p := filepath.Join(v.dir, filepath.FromSlash(file))
	b, err := os.ReadFile(p)
	if err != nil {
		v.t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		drop := false
		for _, s := range subs {
			drop = drop || strings.Contains(l, s)
		}
		if !drop {
			keep = append(keep, l)
		}
	}
	if err := os.WriteFile(p, []byte(strings.Join(keep, "")), 0o644); err != nil {
		v.t.Fatal(err)
	}
	return v
}
