package proctree

import (
	"os"
	"strconv"
	"strings"
)

// Descendants returns the live descendants of pid (zombies, which run
// nothing, left out), parents before their children, read from
// /proc/<pid>/stat of every process. A process that forks while the
// listing runs may be missed: Kill lists again until nothing is left.
func Descendants(pid int) []Process {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	kids := map[int][]stat{}
	for _, e := range dir {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, ok := readStat(p); ok {
			kids[s.ppid] = append(kids[s.ppid], s)
		}
	}
	var out []Process
	next := []int{pid}
	seen := map[int]bool{pid: true}
	for len(next) > 0 {
		parent := next[0]
		next = next[1:]
		for _, k := range kids[parent] {
			if seen[k.pid] {
				continue
			}
			seen[k.pid] = true
			next = append(next, k.pid) // a zombie's children were reparented: none
			if k.live {
				out = append(out, Process{PID: k.pid, PGID: k.pgid})
			}
		}
	}
	return out
}

// stat is what Descendants reads of one process.
type stat struct {
	pid, ppid, pgid int
	live            bool // not a zombie (or a zombie leader with live threads)
}

// readStat parses /proc/<pid>/stat: pid (comm) state ppid pgrp ...
// num_threads (field 20). comm may hold spaces and parentheses, so the
// fields are split after its last ')'. ok is false when the process is
// gone.
func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 18 {
		return stat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return stat{}, false
	}
	threads, _ := strconv.Atoi(f[17])
	dead := (f[0] == "Z" || f[0] == "X") && threads <= 1
	return stat{pid: pid, ppid: ppid, pgid: pgid, live: !dead}, true
}
