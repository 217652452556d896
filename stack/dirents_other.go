//go:build !linux

package stack

import (
	"os"
	"strconv"
)

// numericEntries calls f with each entry of the directory d whose name is
// a positive decimal number.
func numericEntries(d *os.File, buf []byte, f func(n int)) ([]byte, error) {
	if _, err := d.Seek(0, 0); err != nil {
		return buf, err
	}
	names, err := d.Readdirnames(-1)
	for _, name := range names {
		if v, err := strconv.Atoi(name); err == nil && v > 0 {
			f(v)
		}
	}
	return buf, err
}
