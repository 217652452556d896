//go:build !linux

package stack

// liveNS is empty off Linux: no netlink sources.
type liveNS struct{}

func (l *liveNS) close() {}

// openNS returns the namespace of t; off Linux only its files are read.
func (s *Sampler) openNS(t target) (*nsState, error) { return &nsState{id: t.id, path: t.path}, nil }

// openFiles opens n's files through the root.
func (s *Sampler) openFiles(n *nsState) {
	for i, p := range nsFilePaths {
		n.files.f[i], n.files.err[i] = s.o.root.Open(p)
	}
}

// readLive reads nothing off Linux.
func (s *Sampler) readLive(n *nsState, x *Sample) {}
