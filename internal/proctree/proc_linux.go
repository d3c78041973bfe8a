package proctree

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// List returns every process in /proc with the fields this package
// reads; a process that exits while the listing runs is left out. It
// returns an error when /proc cannot be read (not mounted, or hidden
// from this process).
func List() ([]Process, error) {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("proctree: list processes: %w", err)
	}
	out := make([]Process, 0, len(dir))
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := Stat(pid); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// Stat reads one process from /proc/<pid>/stat: pid (comm) state ppid pgrp
// ... num_threads (field 20) ... starttime (field 22). comm may hold spaces
// and parentheses, so the fields are split after its last ')'. ok is false
// when the process is gone or the line is not in that shape.
func Stat(pid int) (Process, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Process{}, false
	}
	return parseStat(pid, string(b))
}

// parseStat parses the text of /proc/<pid>/stat (see Stat).
func parseStat(pid int, s string) (Process, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Process{}, false
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return Process{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Process{}, false
	}
	threads, _ := strconv.Atoi(f[17])
	dead := (f[0] == "Z" || f[0] == "X") && threads <= 1
	return Process{PID: pid, PPID: ppid, PGID: pgid, Start: start, Live: !dead}, true
}
