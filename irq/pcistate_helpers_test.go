package irq

import "github.com/nicdiag/nicdiag/internal/fsroot"

// readPCIFunction reads the function at address raw once, as a sampler
// does at a reading, with files opened for the call.
func readPCIFunction(root fsroot.Root, raw string, buf *[]byte) pciRead {
	f := newPCIFuncs([]string{raw}, nil)[0]
	defer f.close()
	return f.read(root, buf)
}
