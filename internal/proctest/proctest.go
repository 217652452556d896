// Package proctest finds processes by their command line, for tests that
// check a command's process tree was ended.
package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Sleeping returns the pids of the live processes running "sleep mark".
func Sleeping(mark string) []int {
	var out []int
	for _, pid := range LiveWith(mark) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if argv := strings.Split(string(b), "\x00"); len(argv) == 3 && filepath.Base(argv[0]) == "sleep" && argv[1] == mark {
			out = append(out, pid)
		}
	}
	return out
}

// LiveWith returns the pids of the processes, zombies aside, whose command
// line holds s.
func LiveWith(s string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(st, ')'); err == nil && i > 0 && i+2 < len(st) && st[i+2] != 'Z' && st[i+2] != 'X' {
			out = append(out, pid)
		}
	}
	return out
}
