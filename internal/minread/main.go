// Command minread is the smallest Go program that reads a given set of
// files: the yardstick `nicdiag list` is compared with ("no more than 3×
// a minimal Go reader of the same files"). It reads every file named on
// standard input, one path per line, with open/read/close, lists every
// directory and reads every symlink named there, and prints nothing. The
// file list is taken from strace of the command compared:
//
//	strace -f -e trace=openat,readlinkat -o trace nicdiag list
//	grep -o '"/[^"]*"' trace | tr -d '"' | sort -u > files
//	go build -o minread ./internal/minread
//	go run ./internal/pairtime "nicdiag list" "./minread -list files"
package main

import (
	"bufio"
	"flag"
	"os"
)

func main() {
	list := flag.String("list", "", "file with one path per line")
	flag.Parse()
	f, err := os.Open(*list)
	if err != nil {
		os.Exit(1)
	}
	sc := bufio.NewScanner(f)
	buf := make([]byte, 64<<10)
	for sc.Scan() {
		p := sc.Text()
		if t, err := os.Readlink(p); err == nil {
			_ = t
			continue
		}
		g, err := os.Open(p)
		if err != nil {
			continue
		}
		if fi, err := g.Stat(); err == nil && fi.IsDir() {
			g.Readdirnames(-1)
		} else {
			for {
				n, err := g.Read(buf)
				if n == 0 || err != nil {
					break
				}
			}
		}
		g.Close()
	}
}
