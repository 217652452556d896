package stack

import (
	"github.com/nicdiag/nicdiag/internal/text"
)

// The conntrack statistics kept, by index into ctStats.
const (
	ctFound = iota
	ctInvalid
	ctInsert
	ctInsertFailed
	ctDrop
	ctEarlyDrop
	nCT
)

// ctStats are /proc/net/stat/nf_conntrack's kept columns summed over CPUs.
type ctStats [nCT]uint64

var ctNames = map[string]int{"found": ctFound, "invalid": ctInvalid, "insert": ctInsert,
	"insert_failed": ctInsertFailed, "drop": ctDrop, "early_drop": ctEarlyDrop}

// maxCTColumns and maxCTRows bound the table: the kernel prints 17 columns
// and one row per possible CPU.
const (
	maxCTColumns = 64
	maxCTRows    = 8192
)

// parseConntrackStat sums the kept columns of /proc/net/stat/nf_conntrack,
// b: a header of column names, then one row of hexadecimal counts per
// possible CPU. Columns are found by name (kernels differ in which they
// print); each row must have as many fields as the header.
func parseConntrackStat(b []byte) (ctStats, error) {
	var s ctStats
	var idx [maxCTColumns]int // column → kept index, -1 when not kept
	header, b := nextLine(b)
	cols := 0
	for f, rest := nextField(header); len(f) > 0; f, rest = nextField(rest) {
		if cols == maxCTColumns {
			return s, malformed(conntrackStatFile, 1, "%w: over %d columns", ErrTooLarge, maxCTColumns)
		}
		i, ok := ctNames[string(f)]
		if !ok {
			i = -1
		}
		idx[cols] = i
		cols++
	}
	if cols == 0 {
		return s, malformed(conntrackStatFile, 1, "no header")
	}
	for n := 2; len(b) > 0; n++ {
		var line []byte
		line, b = nextLine(b)
		if len(line) == 0 {
			continue
		}
		if n-1 > maxCTRows {
			return s, malformed(conntrackStatFile, n, "%w: over %d rows", ErrTooLarge, maxCTRows)
		}
		col := 0
		for f, rest := nextField(line); len(f) > 0; f, rest = nextField(rest) {
			if col == cols {
				return s, malformed(conntrackStatFile, n, "more fields than the %d columns", cols)
			}
			v, ok := text.Hex(f)
			if !ok {
				return s, malformed(conntrackStatFile, n, "not a hexadecimal count: %q", text.Clip(string(f)))
			}
			if i := idx[col]; i >= 0 {
				s[i] += v
			}
			col++
		}
		if col != cols {
			return s, malformed(conntrackStatFile, n, "%d fields for %d columns", col, cols)
		}
	}
	return s, nil
}

// delta returns the statistics from prev to cur into c; a count that went
// back counts from 0.
func (cur *ctStats) delta(prev *ctStats, c *Conntrack) {
	var d ctStats
	for i := range d {
		d[i] = sub64(cur[i], prev[i])
	}
	c.Found, c.Invalid, c.Insert = d[ctFound], d[ctInvalid], d[ctInsert]
	c.InsertFailed, c.Drop, c.EarlyDrop = d[ctInsertFailed], d[ctDrop], d[ctEarlyDrop]
	c.StatsKnown = true
}
