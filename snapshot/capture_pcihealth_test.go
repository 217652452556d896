package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
)

// A capture keeps what the pcie-health checks read: the AER statistics
// files of every PCI function and the type of its IOMMU group, which lies
// behind the iommu_group link (../../../kernel/iommu_groups/N, as the
// kernel lays it out) and is copied there.
func TestCaptureIOMMUAndAER(t *testing.T) {
	src := snaptest.Copy(t, filepath.Join("..", "testdata", "snapshots", "82576-minipcie-x1"))
	fn, err := filepath.EvalSymlinks(filepath.Join(src, "sys/bus/pci/devices/0000:01:00.0"))
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(fn, filepath.Join(src, "sys/kernel/iommu_groups/9"))
	snaptest.Add(t, src, map[string]string{"sys/kernel/iommu_groups/9/type": "DMA-FQ\n"})
	if err := os.Symlink(rel, filepath.Join(fn, "iommu_group")); err != nil {
		t.Fatal(err)
	}
	aer := "RxErr 7\nTOTAL_ERR_COR 7\n"
	if err := os.WriteFile(filepath.Join(fn, "aer_dev_correctable"), []byte(aer), 0o444); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy")
	if _, err := Capture(context.Background(), dst, FromRoot(src)); err != nil {
		t.Fatal(err)
	}
	dev := filepath.Join(dst, "sys/bus/pci/devices/0000:01:00.0")
	if b, err := os.ReadFile(filepath.Join(dev, "iommu_group/type")); err != nil || string(b) != "DMA-FQ\n" {
		t.Errorf("iommu_group/type %q, %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(dev, "iommu_group")); err != nil || filepath.IsAbs(l) {
		t.Errorf("iommu_group link %q, %v", l, err)
	}
	if b, err := os.ReadFile(filepath.Join(dev, "aer_dev_correctable")); err != nil || string(b) != aer {
		t.Errorf("aer_dev_correctable %q, %v", b, err)
	}
}
