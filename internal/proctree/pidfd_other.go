//go:build !linux

package proctree

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// handle is a listed process; outside Linux there are no pidfds (and
// nothing is listed: see List).
type handle struct{ pid int }

// pin checks that p.PID still names the listed process; outside Linux
// nothing can be checked, so it refuses with ErrReused.
func pin(p Process) (handle, error) {
	return handle{}, fmt.Errorf("proctree: pid %d: %w", p.PID, ErrReused)
}

// signal sends sig to the process by number.
func (h handle) signal(sig syscall.Signal) error { return syscall.Kill(h.pid, sig) }

// close does nothing: there is no descriptor.
func (h handle) close() {}

// waitExits waits for round or ctx, whichever ends first.
func waitExits(ctx context.Context, _ []handle, round time.Duration) {
	timer := time.NewTimer(round)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}
