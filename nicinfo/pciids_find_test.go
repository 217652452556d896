package nicinfo

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicdiag/nicdiag/option"
)

const idsHeader = "#\n#\tList of PCI ID's\n#\n#\tVersion: 2023.04.10\n#\tDate:    2023-04-10 20:08:02\n#\n\n# Vendors\n8086  Intel Corporation\n"

func TestFindPCIIDs(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "pci.ids")
	os.WriteFile(plain, []byte(idsHeader), 0o644)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(idsHeader))
	zw.Close()
	packed := filepath.Join(dir, "pci.ids.gz")
	os.WriteFile(packed, gz.Bytes(), 0o644)
	for _, p := range []string{plain, packed} {
		f, err := FindPCIIDs(WithPCIIDs(p))
		if err != nil || f.Path != p || f.Version != "2023.04.10" || f.Date != "2023-04-10 20:08:02" {
			t.Errorf("%s: %+v, %v", p, f, err)
		}
	}
	// A snapshot's own pci.ids comes first.
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "usr/share/misc"), 0o755)
	os.MkdirAll(filepath.Join(root, "sys"), 0o755)
	os.WriteFile(filepath.Join(root, "usr/share/misc/pci.ids"), []byte("# no header fields\n8086  Intel\n"), 0o644)
	f, err := FindPCIIDs(option.Root(root))
	if err != nil || f.Path != filepath.Join(root, "usr/share/misc/pci.ids") || f.Version != "" || f.Date != "" {
		t.Errorf("snapshot: %+v, %v", f, err)
	}
	if _, err := FindPCIIDs(WithPCIIDs(filepath.Join(dir, "absent"))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent explicit file: %v", err)
	}
}
