package pcie

import (
	"errors"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// readConfigFile reads and decodes the config file at p (ReadConfig: only
// the bytes decoded). note says why there is no Config: "config: " and
// why the file could not be read, or the decoder's error.
func readConfigFile(r fsroot.Root, p string) (c *Config, note string) {
	f, err := r.Open(p)
	if err != nil {
		return nil, "config: " + readReason(err)
	}
	defer f.Close()
	fi, err := f.Stat() // a regular file: Open refuses anything else
	if err != nil {
		return nil, "config: " + readReason(err)
	}
	c, err = ReadConfig(f, int(min(fi.Size(), maxConfig)))
	switch {
	case err == nil:
		return c, c.Note
	case errors.Is(err, ErrNoDevice):
		return nil, err.Error() // an SR-IOV VF's header reads all ones
	case errors.Is(err, ErrConfigTruncated), errors.Is(err, ErrCapList):
		return nil, ConfigDamaged + err.Error()
	}
	return nil, "config: " + readReason(err)
}
