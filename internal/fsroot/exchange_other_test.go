//go:build unix && !linux

package fsroot

import "os"

// renameExchange: without RENAME_EXCHANGE, two renames (not atomic).
func renameExchange(a, b string) error {
	if err := os.Rename(a, a+".tmp"); err != nil {
		return err
	}
	if err := os.Rename(b, a); err != nil {
		return err
	}
	return os.Rename(a+".tmp", b)
}
