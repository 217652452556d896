//go:build !linux

package irq

import "github.com/nicdiag/nicdiag/internal/fsroot"

// kernelFS is false off Linux: the link count is checked at every read.
func kernelFS(fd int) bool { return false }

// readDirIDs lists the names of the directory at k.path that are pids
// into ids; off Linux it is read by name each time.
func (k *kfile) readDirIDs(r fsroot.Root, buf []byte, ids []int) ([]byte, []int, error) {
	names, err := r.ReadDir(k.path)
	if err != nil {
		return buf, ids[:0], err
	}
	ids = ids[:0]
	for _, n := range names {
		if id, ok := pidName(n); ok {
			ids = append(ids, id)
		}
	}
	return buf, ids, nil
}

// fileWatch is a no-op off Linux: the link count is checked at every read.
type fileWatch struct{}

func (w *fileWatch) add(k *kfile)    {}
func (w *fileWatch) remove(k *kfile) { k.wd = 0 }
func (w *fileWatch) poll()           {}
func (w *fileWatch) close()          {}
