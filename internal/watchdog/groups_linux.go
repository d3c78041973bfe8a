package watchdog

import (
	"context"
	"fmt"
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
	procs, err := proctree.List()
	if err != nil {
		return pgids, err
	}
	want := map[int]bool{}
	for _, g := range pgids {
		want[g] = true
	}
	running := map[int]bool{}
	for _, p := range procs {
		if p.Live && want[p.PGID] {
			running[p.PGID] = true
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
