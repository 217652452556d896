package nicdiag

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
)

// incompleteAbout returns the nicdiag.incomplete finding about subject.
func incompleteAbout(fs []finding.Finding, subject string) *finding.Finding {
	for i, f := range fs {
		if f.Code == finding.NicdiagIncomplete && f.Subject == subject {
			return &fs[i]
		}
	}
	return nil
}

// A snapshot with /proc but without /proc/interrupts is damaged: the IRQ
// checks did not run, and check says so at warn. A snapshot of sysfs alone
// never held it: the same is said at info, and the exit code stands.
func TestMissingInterruptsIsIncomplete(t *testing.T) {
	root := snaptest.Copy(t, snaps+"82576-minipcie-x1")
	must(t, os.Remove(filepath.Join(root, "proc/interrupts")))
	r, err := Check(context.Background(), option.Root(root))
	must(t, err)
	f := incompleteAbout(r.Findings, HostSubject)
	if f == nil || f.Severity != finding.Warn || !strings.Contains(f.Summary, "/proc/interrupts") {
		t.Errorf("without proc/interrupts: %+v; want a warn nicdiag.incomplete naming /proc/interrupts", f)
	}

	r, err = Check(context.Background(), option.Root(snaps+"connectx3pro-haswell"))
	must(t, err)
	f = incompleteAbout(r.Findings, HostSubject)
	if f == nil || f.Severity != finding.Info || !strings.Contains(f.Summary, "holds no /proc") || !strings.Contains(f.Fix, "nicdiag snapshot") {
		t.Errorf("a snapshot without /proc: %+v; want an info nicdiag.incomplete saying so", f)
	}
	if code := exitCode(r.Findings); code != 0 {
		t.Errorf("exit %d for the healthy control; the info finding changes no exit code", code)
	}
}
