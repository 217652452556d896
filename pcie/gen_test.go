package pcie

import (
	"math"
	"testing"
)

func TestGenBySpeed(t *testing.T) {
	cases := []struct {
		gts  float64
		want int // 0: not found
	}{
		{2.5, 1}, {2.5000001, 1}, {5, 2}, {5.0, 2}, {4.99, 2}, {8, 3}, {8.0, 3},
		{16, 4}, {16.0, 4}, {32, 5}, {64, 6}, {63.99999, 6},
		{0, 0}, {-2.5, 0}, {3, 0}, {10, 0}, {128, 0}, {math.NaN(), 0}, {math.Inf(1), 0},
	}
	for _, c := range cases {
		g, ok := GenBySpeed(c.gts)
		if ok != (c.want != 0) || g.Number != c.want {
			t.Errorf("GenBySpeed(%v) = gen %d, %v; want gen %d", c.gts, g.Number, ok, c.want)
		}
	}
}

// TestGenTable checks the table against docs/pcie-model.md §2.1.
func TestGenTable(t *testing.T) {
	want := []struct {
		gts      float64
		enc      string
		laneGbps float64
		framing  int
	}{
		{2.5, "8b/10b", 2.000, 8},
		{5, "8b/10b", 4.000, 8},
		{8, "128b/130b", 7.877, 8},
		{16, "128b/130b", 15.754, 8},
		{32, "128b/130b", 31.508, 8},
		{64, "", 59.0, 0},
	}
	gs := Generations()
	if len(gs) != len(want) {
		t.Fatalf("%d generations, want %d", len(gs), len(want))
	}
	for i, w := range want {
		g := gs[i]
		if g.Number != i+1 || g.GTs != w.gts || g.FramingBytes != w.framing ||
			math.Abs(g.LaneGbps-w.laneGbps) > 0.0006 || (w.enc != "" && g.Encoding != w.enc) {
			t.Errorf("gen %d = %+v; want %+v", i+1, g, w)
		}
	}
	gs[0].GTs = 99 // a copy: must not change the table
	if Generations()[0].GTs != 2.5 {
		t.Error("Generations returned the table itself")
	}
}

func TestRawGbps(t *testing.T) {
	cases := []struct {
		gts   float64
		width int
		want  float64
	}{
		{2.5, 1, 2.0}, {5, 1, 4.0}, {8, 8, 63.02}, {8, 16, 126.03}, {16, 4, 63.02}, {64, 16, 944},
	}
	for _, c := range cases {
		g, _ := GenBySpeed(c.gts)
		if got := g.RawGbps(c.width); math.Abs(got-c.want) > 0.006 {
			t.Errorf("%v GT/s x%d: RawGbps = %.3f, want %.2f", c.gts, c.width, got, c.want)
		}
	}
}
