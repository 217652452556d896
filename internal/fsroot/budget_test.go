package fsroot

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Once a root's deadline has passed every reader fails at once with
// ErrBudget (which is also context.DeadlineExceeded); before it, and
// without one, they read.
func TestBudget(t *testing.T) {
	d := tree(t)
	for _, r := range []Root{New(d), New("/")} {
		p := "/sys/class/net/eth0/mtu"
		if r.Live() {
			p = New(d).Path(p)
		}
		spent := r.WithBudget(time.Nanosecond)
		time.Sleep(time.Millisecond)
		if dl, ok := spent.Deadline(); !ok || dl.After(time.Now()) {
			t.Fatalf("Deadline = %v, %v", dl, ok)
		}
		var buf []byte
		for name, read := range map[string]func() error{
			"ReadFile": func() error { _, err := spent.ReadFile(p); return err },
			"ReadInt":  func() error { _, err := spent.ReadInt(p); return err },
			"ReadInto": func() error { _, err := spent.ReadInto(p, buf, 10); return err },
			"Open":     func() error { _, err := spent.Open(p); return err },
			"ReadDir":  func() error { _, err := spent.ReadDir("/sys/class/net"); return err },
			"Readlink": func() error { _, err := spent.Readlink("/sys/class/net/eth0"); return err },
			"LinkBase": func() error { _, err := spent.LinkBase("/sys/class/net/eth0"); return err },
			"Mode":     func() error { _, err := spent.Mode("/sys/class/net/eth0"); return err },
			"OpenDir":  func() error { _, err := spent.OpenDir("/sys/class/net"); return err },
			"Realpath": func() error { _, err := spent.Realpath("/sys/class/net/eth0"); return err },
			"Resolve":  func() error { _, err := spent.Resolve("/sys/class/net/eth0", nil); return err },
			"Err":      spent.Err,
		} {
			err := read()
			if !errors.Is(err, ErrBudget) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("live %v: %s = %v, want ErrBudget and context.DeadlineExceeded", r.Live(), name, err)
			}
		}
		if spent.Exists(p) {
			t.Errorf("live %v: Exists is true past the deadline", r.Live())
		}
		// The Root it was made from has no deadline; a far one, or one
		// removed, lets the reads through.
		for _, ok := range []Root{r, r.WithBudget(time.Hour), spent.WithBudget(0), spent.WithDeadline(time.Time{})} {
			if v, err := ok.ReadInt(p); err != nil || v != 1500 || ok.Err() != nil {
				t.Errorf("live %v: ReadInt = %d, %v (Err %v)", r.Live(), v, err, ok.Err())
			}
		}
		if _, has := r.Deadline(); has {
			t.Error("WithBudget changed the Root it was called on")
		}
	}
}
