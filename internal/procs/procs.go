// Package procs reads the process table from /proc: each process's parent,
// process group, state and start time, and the tree below a process. It is
// what monitor needs to end a command's process tree and nicdiag to end
// its own children.
package procs

import (
	"bytes"
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
// parentheses; the fields after it start past its last ')'.
func Parse(pid int, b []byte) (Proc, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return Proc{}, false
	}
	p := Proc{PID: pid, State: f[0][0]}
	var err1, err2, err3 error
	p.PPID, err1 = strconv.Atoi(string(f[1]))
	p.PGID, err2 = strconv.Atoi(string(f[2]))
	p.Start, err3 = strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Proc{}, false
	}
	return p, true
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
