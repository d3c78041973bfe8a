// Package proctree finds and ends the descendants of a process: every
// process whose chain of parents leads to it, whatever its process group
// or session. A supervised command's grandchild that calls setsid, or a
// daemon that forks twice, leaves the process group a supervisor kills but
// not this tree, as long as the process at its top (zkelect's reaper) is a
// child subreaper (prctl PR_SET_CHILD_SUBREAPER): orphans below it are
// reparented to it, not to init. On Linux it reads /proc; elsewhere it
// finds nothing.
//
// A process is signalled through a pidfd (pidfd_open(2), Linux 5.3+) taken
// after it was listed and checked to be the same process (its start time
// unchanged): a PID that was freed and reused by an unrelated process
// between the listing and the signal is never signalled. Kill then waits
// on those pidfds for the exits instead of polling /proc. Where no pidfd
// can be had (a kernel or sandbox without them, descriptors used up by a
// large tree) the check narrows the window to one system call, the
// process is signalled by number, and Kill reads /proc again every few
// milliseconds.
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

// killRound bounds how long Kill waits for the processes it signalled
// before it lists the tree again (to find what forked meanwhile).
const killRound = 50 * time.Millisecond

// Descendants returns the live descendants of pid (zombies, which run
// nothing, left out), parents before their children. A process that forks
// while the listing runs may be missed: Kill lists again until nothing is
// left.
func Descendants(pid int) []Process {
	out, _ := descendants(pid)
	return out
}

// descendants is Descendants with the error of a /proc that cannot be
// read (then nothing is returned).
func descendants(pid int) ([]Process, error) {
	all, err := List()
	if err != nil {
		return nil, err
	}
	kids := map[int][]Process{}
	for _, p := range all {
		kids[p.PPID] = append(kids[p.PPID], p)
	}
	var out []Process
	next := []int{pid}
	seen := map[int]bool{pid: true}
	for len(next) > 0 {
		parent := next[0]
		next = next[1:]
		for _, k := range kids[parent] {
			if seen[k.PID] {
				continue
			}
			seen[k.PID] = true
			next = append(next, k.PID) // a zombie's children were reparented: none
			if k.Live {
				out = append(out, k)
			}
		}
	}
	return out, nil
}

// Signal sends sig to every live descendant of pid outside process group
// skip (0: none skipped; the supervisor's signal to the group reached
// those already) and returns how many it signalled. Errors (a process gone
// meanwhile, its PID reused, one of another user) are ignored.
func Signal(pid int, sig syscall.Signal, skip int) int {
	n := 0
	for _, p := range Descendants(pid) {
		if skip != 0 && p.PGID == skip {
			continue
		}
		h, err := pin(p)
		if err != nil {
			continue
		}
		if h.signal(sig) == nil {
			n++
		}
		h.close()
	}
	return n
}

// Kill sends SIGKILL to every live descendant of pid (not pid itself),
// waits for them to exit, and lists the tree again until none is left
// that can run: what forked in between, or was reparented to pid as its
// parent died, is killed in a later round. It returns an error naming
// those still running when ctx ends first (a process of another user,
// which a signal cannot reach), and one wrapping List's when /proc cannot
// be read: the tree is then not known to be gone.
func Kill(ctx context.Context, pid int) error {
	for {
		left, err := descendants(pid)
		if err != nil {
			return fmt.Errorf("proctree: descendants of %d not ended: %w", pid, err)
		}
		if len(left) == 0 {
			return nil
		}
		killed := make([]handle, 0, len(left))
		for _, p := range left {
			if h, err := pin(p); err == nil {
				_ = h.signal(syscall.SIGKILL)
				killed = append(killed, h)
			}
		}
		waitExits(ctx, killed, killRound)
		for _, h := range killed {
			h.close()
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("proctree: descendants of %d still running after SIGKILL: %v: %w", pid, left, context.Cause(ctx))
		}
	}
}
