package irq

// countStore holds rows of counts (uint64s, width a row) in blocks of
// blockRows rows: it grows without copying what it holds, so a parse's
// memory is the counts it keeps.
type countStore struct {
	blocks [][]uint64
	width  int
	n      int // rows held
	hint   int // rows the parse will hold, when known: a last block no larger
}

const blockRows = 64

// reset empties the store for rows of width counts, keeping its blocks
// when the width is the same.
func (c *countStore) reset(width int) {
	if width != c.width {
		c.blocks, c.width = nil, width
	}
	c.n = 0
}

// add appends a row of zeros and returns it.
func (c *countStore) add() []uint64 {
	b := c.n / blockRows
	i := c.n % blockRows * c.width
	switch {
	case b == len(c.blocks):
		rows := blockRows
		if c.hint > c.n {
			rows = min(blockRows, c.hint-c.n)
		}
		c.blocks = append(c.blocks, make([]uint64, rows*c.width))
	case len(c.blocks[b]) < i+c.width: // a short last block, and more rows
		nb := make([]uint64, blockRows*c.width)
		copy(nb, c.blocks[b])
		c.blocks[b] = nb
	}
	r := c.blocks[b][i : i+c.width : i+c.width]
	clear(r)
	c.n++
	return r
}

// row returns row k.
func (c *countStore) row(k int) []uint64 {
	i := k % blockRows * c.width
	return c.blocks[k/blockRows][i : i+c.width : i+c.width]
}

// trim lets go of the blocks past those holding rows (a large parse's,
// once the next needs fewer).
func (c *countStore) trim() {
	used := (c.n + blockRows - 1) / blockRows
	if len(c.blocks) > used {
		clear(c.blocks[used:])
		c.blocks = c.blocks[:used]
	}
}
