package fsroot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotRoot says a directory given as a root holds neither sys/ nor proc/:
// read as a host, an empty or unrelated directory would have no NICs.
var ErrNotRoot = errors.New("not a host root or snapshot: it holds neither sys/ nor proc/")

// Check refuses a root directory that does not exist (an error matching
// os.ErrNotExist) or that holds neither sys/ nor proc/ (ErrNotRoot). The
// live host, "" or "/", is always a root.
func Check(dir string) error {
	if dir == "" || dir == "/" {
		return nil
	}
	if _, err := os.Stat(dir); err != nil {
		return err
	}
	for _, sub := range []string{"sys", "proc"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err == nil && fi.IsDir() {
			return nil
		}
	}
	return fmt.Errorf("%s: %w", dir, ErrNotRoot)
}
