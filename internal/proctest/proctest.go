// Package proctest finds processes by their command line, for tests that
// check a command's process tree was ended.
package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/procs"
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
	var out []int
	for _, p := range procs.List() {
		if p.Gone() {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(s)) {
			out = append(out, p.PID)
		}
	}
	return out
}
