package nicinfo

import (
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
)

// copyTree copies a snapshot directory into a temporary one a test may damage.
func copyTree(t testing.TB, src string) string { return snaptest.Copy(t, src) }
