package testenv

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// childStopTimeout is how long stopChildServer waits for a server to exit
// on its shutdown signal before it kills the process group.
const childStopTimeout = 10 * time.Second

// stopChildServer stops a server the test started in its own process group
// (PostgreSQL, Prometheus): it sends sig to the process, kills the group
// (SIGKILL) if the process has not exited (closed exited) within
// childStopTimeout, and then removes dir. The error names the server when
// it had to be killed or dir could not be removed.
func stopChildServer(name string, proc *os.Process, exited <-chan struct{}, sig syscall.Signal, dir string) error {
	var err error
	_ = proc.Signal(sig)
	timer := time.NewTimer(childStopTimeout)
	defer timer.Stop()
	select {
	case <-exited:
	case <-timer.C:
		_ = syscall.Kill(-proc.Pid, syscall.SIGKILL)
		<-exited
		err = fmt.Errorf("testenv: %s did not stop on %v within %s; killed", name, sig, childStopTimeout)
	}
	if dir == "" {
		return err
	}
	if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
		err = fmt.Errorf("testenv: remove %s dir: %w", name, rerr)
	}
	return err
}
