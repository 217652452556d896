// Package procs reads the process table from /proc: each process's parent,
// process group, state and start time, and the tree below a process. It is
// what monitor needs to end a command's process tree and nicdiag to end
// its own children.
package procs

import (
	"os"
	"strconv"
)

// Proc is what /proc/PID/stat says of one process.
type Proc struct {
	PID, PPID, PGID int
	State           byte   // R, S, D, Z, X, ...
	Start           uint64 // start time in clock ticks after boot: tells a reused pid
}

// Gone reports whether p has exited and waits to be reaped (a zombie) or
// is being torn down.
func (p Proc) Gone() bool { return p.State == 'Z' || p.State == 'X' }

// Read reads /proc/PID/stat; false when the process is gone.
func Read(pid int) (Proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	return Parse(pid, b)
}

// Parse parses a /proc/PID/stat line: "pid (comm) state ppid pgrp
// session ... starttime(22) ...". The comm may hold spaces and
// parentheses; the fields after it start past its last ')'. It is
// ParseStat's Proc.
func Parse(pid int, b []byte) (Proc, bool) {
	s, ok := ParseStat(pid, b)
	return s.Proc, ok
}

// List reads the stat of every process in /proc.
func List() []Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]Proc, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if p, ok := Read(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// Descendants returns the processes of ps below those in roots (not the
// roots themselves), through their parent pids, nearest first.
func Descendants(ps []Proc, roots map[int]bool) []Proc {
	kids := map[int][]Proc{}
	for _, p := range ps {
		kids[p.PPID] = append(kids[p.PPID], p)
	}
	var out []Proc
	done := map[int]bool{}
	queue := make([]int, 0, len(roots))
	for pid := range roots {
		queue = append(queue, pid)
		done[pid] = true
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			if !done[k.PID] {
				done[k.PID] = true
				out = append(out, k)
				queue = append(queue, k.PID)
			}
		}
	}
	return out
}
