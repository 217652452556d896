// Command pairtime times two commands in interleaved pairs (A, B, A, B, …),
// so that a change in the machine's load falls on both alike, and prints
// each one's median wall time and the ratio of the medians. It is how the
// README's start-up comparisons were measured:
//
//	go run ./internal/pairtime -n 200 'nicdiag list' 'lspci -vvv'
//
// Each command line is split on spaces (no shell); output goes to
// /dev/null.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 100, "pairs to run")
	warm := flag.Int("warmup", 5, "pairs run first and not counted")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: pairtime [-n N] 'COMMAND A' 'COMMAND B'")
		os.Exit(2)
	}
	a, b := strings.Fields(flag.Arg(0)), strings.Fields(flag.Arg(1))
	var ta, tb []time.Duration
	for i := 0; i < *warm+*n; i++ {
		da, db := run(a), run(b)
		if i >= *warm {
			ta, tb = append(ta, da), append(tb, db)
		}
	}
	ma, mb := median(ta), median(tb)
	fmt.Printf("A %-40s median %8.2f ms\n", flag.Arg(0), ms(ma))
	fmt.Printf("B %-40s median %8.2f ms\n", flag.Arg(1), ms(mb))
	fmt.Printf("A/B %.2f over %d interleaved pairs\n", float64(ma)/float64(mb), *n)
}

func run(argv []string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			fmt.Fprintln(os.Stderr, "pairtime:", err)
			os.Exit(1)
		}
	}
	return time.Since(start)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
