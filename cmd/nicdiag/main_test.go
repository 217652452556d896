package main

import (
	"bytes"
	"context"
	"sync"
	"testing"
)

// TestFlagsPerInvocation runs commands with different flag values at once:
// each invocation binds its flags into values of its own, so none sees
// another's (go test -race would catch shared ones).
func TestFlagsPerInvocation(t *testing.T) {
	root := snaps + "82576-minipcie-x1"
	cases := [][]string{
		{"--root", root, "list"},
		{"--root", root, "list", "--all"},
		{"--root", root, "explain", "--frame-size", "64", "enp1s0f0"},
		{"--root", root, "explain", "--frame-size", "1518", "--direction", "rx", "enp1s0f0"},
		{"--root", root, "explain", "--ports", "1", "enp1s0f0"},
	}
	// What each says on its own, then all of them at once, twice over.
	want := make([]string, len(cases))
	for i, args := range cases {
		want[i] = runOnce(args)
	}
	var wg sync.WaitGroup
	got := make([]string, 2*len(cases))
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = runOnce(cases[i%len(cases)])
		}()
	}
	wg.Wait()
	for i, g := range got {
		if g != want[i%len(cases)] {
			t.Errorf("%v run alongside others:\n%s\nalone:\n%s", cases[i%len(cases)], g, want[i%len(cases)])
		}
	}
	if want[2] == want[3] || want[2] == want[4] {
		t.Error("different flags gave the same explanation")
	}
}

func runOnce(args []string) string {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return out.String() + errb.String() + string(rune('0'+code))
}
