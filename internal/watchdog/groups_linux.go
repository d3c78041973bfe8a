package watchdog

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkelect/zkelect/internal/proctree"
)

// groupPoll is how often killGroups reads /proc while it waits for killed
// groups (the kernel offers no wait for processes it is not the parent of).
const groupPoll = 5 * time.Millisecond

// killGroups sends SIGKILL to the descendants of each group's leader
// (proctree.Kill) and to every process group in pgids, and waits until
// no process of any of them can run again: every member is gone or a
// zombie with no live thread (a zombie's parent may take its time to reap
// it; it runs nothing). Bounded by timeout and ctx; it returns an error
// naming the groups still running then.
func killGroups(ctx context.Context, pgids []int, timeout time.Duration) error {
	if len(pgids) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	for {
		for _, g := range pgids {
			// The group's leader (a supervisor's reaper, a child
			// subreaper) first loses the descendants that left its group
			// (setsid, a double fork), while they are still its own.
			_ = proctree.Kill(ctx, g)
			_ = syscall.Kill(-g, syscall.SIGKILL) // again each round: nothing forked in between survives
		}
		left, err := runningGroups(pgids)
		if err == nil && len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("watchdog: process groups %v still running %s after SIGKILL (last error %v): leaving every session to its timeout", left, timeout, err)
		case <-tick.C:
		}
	}
}

// runningGroups returns the groups of pgids that have a member able to run.
func runningGroups(pgids []int) ([]int, error) {
	want := map[int]bool{}
	for _, g := range pgids {
		want[g] = true
	}
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return pgids, err
	}
	running := map[int]bool{}
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pgrp, live, ok := procState(pid)
		if ok && live && want[pgrp] {
			running[pgrp] = true
		}
	}
	var left []int
	for _, g := range pgids {
		if running[g] {
			left = append(left, g)
		}
	}
	return left, nil
}

// procState reads a process's group and whether it can still run (not a
// zombie, or a zombie leader with live threads) from /proc/<pid>/stat; ok
// is false when the process is gone.
func procState(pid int) (pgrp int, live, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, false
	}
	// pid (comm) state ppid pgrp ... num_threads is field 20; comm may
	// hold spaces and parentheses, so split after its last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false, false
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 18 {
		return 0, false, false
	}
	pgrp, err = strconv.Atoi(f[2])
	if err != nil {
		return 0, false, false
	}
	threads, _ := strconv.Atoi(f[17])
	dead := (f[0] == "Z" || f[0] == "X") && threads <= 1
	return pgrp, !dead, true
}
