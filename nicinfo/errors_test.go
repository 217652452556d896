package nicinfo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/option"
)

// Every error the exported functions return starts with "nicinfo: " once
// and matches what it is: os.ErrNotExist, os.ErrPermission, a context
// error, or a named refusal.
func TestErrorsPrefixedOnceAndMatchable(t *testing.T) {
	snap := needSnap(t, "virtio-kvm")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	escape := copyTree(t, snap)
	symlink(t, outsideFile(t, "eth0.json", `{"schema":1}`), filepath.Join(escape, "ethtool/eth0.json"))
	var q PCIQuery
	q.Add(0x1af4, 0x1041, 0, 0, 0x020000)
	withHostPCIIDs(t, filepath.Join(t.TempDir(), "absent"))

	cases := []struct {
		name string
		err  func() error
		is   []error
	}{
		{"Get unknown", func() error { _, err := Get(context.Background(), "nope0", option.Root(snap)); return err },
			[]error{ErrNoInterface, os.ErrNotExist}},
		{"List canceled", func() error { _, err := List(canceled, option.Root(snap)); return err }, []error{context.Canceled}},
		{"Get canceled", func() error { _, err := Get(canceled, "eth0", option.Root(snap)); return err }, []error{context.Canceled}},
		{"NoNetdev canceled", func() error { _, err := NoNetdev(canceled, option.Root(snap)); return err }, []error{context.Canceled}},
		{"LookupNames explicit absent", func() error {
			_, err := LookupNames(&q, WithPCIIDs(filepath.Join(t.TempDir(), "none")))
			return err
		}, []error{os.ErrNotExist}},
		{"LookupNames none found", func() error { _, err := LookupNames(&q, option.Root(snap)); return err },
			[]error{ErrNoPCIIDs, os.ErrNotExist}},
		{"ethtool not recorded", func() error { _, err := EthtoolFiles(snap).Answers(context.Background(), "eth9"); return err },
			[]error{ErrNoAnswers, os.ErrNotExist}},
		{"ethtool canceled", func() error { _, err := EthtoolFiles(snap).Answers(canceled, "eth0"); return err },
			[]error{context.Canceled}},
		{"ethtool bad name", func() error { _, err := EthtoolFiles(snap).Answers(context.Background(), "../x"); return err },
			[]error{ErrMalformed}},
		{"ethtool escape", func() error { _, err := EthtoolFiles(escape).Answers(context.Background(), "eth0"); return err },
			[]error{fsroot.ErrEscape, os.ErrPermission}},
		{"live ethtool canceled", func() error { _, err := LiveEthtool().Answers(canceled, "lo"); return err },
			[]error{context.Canceled}},
	}
	if os.Geteuid() != 0 {
		locked := copyTree(t, snap)
		if err := os.Chmod(filepath.Join(locked, "ethtool/eth0.json"), 0); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			err  func() error
			is   []error
		}{"ethtool unreadable", func() error {
			_, err := EthtoolFiles(locked).Answers(context.Background(), "eth0")
			return err
		}, []error{os.ErrPermission}})
	}
	for _, c := range cases {
		err := c.err()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "nicinfo: ") || strings.Count(msg, "nicinfo: ") != 1 {
			t.Errorf("%s: %q; want one leading \"nicinfo: \"", c.name, msg)
		}
		for _, target := range c.is {
			if !errors.Is(err, target) {
				t.Errorf("%s: %v does not match %v", c.name, err, target)
			}
		}
	}

	// The prefix is for callers: Missing keeps its wording.
	bad := copyTree(t, snap)
	if err := os.WriteFile(filepath.Join(bad, "ethtool/eth0.json"), []byte(`{"schema":99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := Get(context.Background(), "eth0", option.Root(bad))
	if err != nil {
		t.Fatal(err)
	}
	if !hasMissing(n, "ethtool: malformed value: ethtool answers schema 99 (this nicdiag reads 1)") {
		t.Errorf("missing %q", n.Missing)
	}
}
