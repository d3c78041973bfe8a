package testenv

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// childProcAttr puts a child in its own process group, so that signals reach
// all of it and none of the test's, and asks the kernel to kill it should the
// test process die without cleaning up (Pdeathsig fires when the OS thread
// that started the child exits; the Go runtime keeps its threads alive unless
// a goroutine exits while locked to one).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// stopWaitLimit bounds how long awaitStopped waits for the kernel to stop
// or continue a process after SIGSTOP or SIGCONT.
const stopWaitLimit = 5 * time.Second

// awaitStopped waits until process pid is stopped (stopped true) or no
// longer stopped, as /proc/<pid>/stat reports: signals are delivered
// asynchronously, and a caller of Pause expects the process to be frozen
// when Pause returns. A process that has gone counts as done.
func awaitStopped(pid int, stopped bool) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	limit := time.NewTimer(stopWaitLimit)
	defer limit.Stop()
	for {
		state, err := procState(pid)
		if err != nil || (state == 'T') == stopped {
			return nil
		}
		select {
		case <-tick.C:
		case <-limit.C:
			return fmt.Errorf("process %d: state %q after %v, want stopped=%v", pid, state, stopWaitLimit, stopped)
		}
	}
}

// procState returns the state letter of /proc/<pid>/stat (R, S, T, Z, ...).
func procState(pid int) (byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	return b[i+2], nil
}
