//go:build unix && !linux

package testenv

import "syscall"

// childProcAttr puts a child in its own process group, so that signals reach
// all of it and none of the test's.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// awaitStopped returns at once: without /proc there is no portable way to
// see that a signal has stopped a process.
func awaitStopped(int, bool) error { return nil }
