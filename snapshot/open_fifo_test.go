package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO as --root waits for a writer, and then for data; a cancelled
// context ends either wait at once, with the context's error.
func TestOpenFIFOCancelled(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "root")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	for _, writer := range []bool{false, true} {
		if writer { // a writer that connects and sends nothing
			go func() {
				if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					time.Sleep(3 * time.Second)
					w.Close()
				}
			}()
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		done := make(chan error, 1)
		go func() {
			s, err := Open(ctx, fifo, WithTempDir(t.TempDir()))
			if s != nil {
				s.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("writer %v: Open = %v; want context.Canceled", writer, err)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("writer %v: Open still blocked 1.9 s after its context was cancelled", writer)
		}
	}
}
