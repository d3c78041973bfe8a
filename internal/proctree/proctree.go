// Package proctree finds and ends the descendants of a process: every
// process whose chain of parents leads to it, whatever its process group
// or session. A supervised command's grandchild that calls setsid, or a
// daemon that forks twice, leaves the process group a supervisor kills but
// not this tree, as long as the process at its top (zkelect's reaper) is a
// child subreaper (prctl PR_SET_CHILD_SUBREAPER): orphans below it are
// reparented to it, not to init. On Linux it reads /proc; elsewhere it
// finds nothing.
//
// What it cannot end: a descendant that changed its user (a signal to it
// is refused), one reparented out of the tree (its top died first, killed
// by someone else), and one in another PID namespace's /proc view.
package proctree

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// killPoll is how often Kill reads /proc again while it waits for the
// processes it killed (the kernel offers no wait for processes one is not
// the parent of).
const killPoll = 2 * time.Millisecond

// Process is one live process of a tree.
type Process struct {
	PID  int
	PGID int // its process group
}

// Signal sends sig to every live descendant of pid outside process group
// skip (0: none skipped; the supervisor's signal to the group reached
// those already) and returns how many it signalled. Errors (a process gone
// meanwhile, one of another user) are ignored.
func Signal(pid int, sig syscall.Signal, skip int) int {
	n := 0
	for _, p := range Descendants(pid) {
		if skip != 0 && p.PGID == skip {
			continue
		}
		if syscall.Kill(p.PID, sig) == nil {
			n++
		}
	}
	return n
}

// Kill sends SIGKILL to every live descendant of pid (not pid itself) and
// reads /proc again until none is left that can run: what forked in
// between, or was reparented to pid as its parent died, is killed in a
// later round. It returns an error naming those still running when ctx
// ends first (a process of another user, which a signal cannot reach).
func Kill(ctx context.Context, pid int) error {
	tick := time.NewTicker(killPoll)
	defer tick.Stop()
	for {
		left := Descendants(pid)
		if len(left) == 0 {
			return nil
		}
		for _, p := range left {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("proctree: descendants of %d still running after SIGKILL: %v: %w", pid, left, context.Cause(ctx))
		case <-tick.C:
		}
	}
}
