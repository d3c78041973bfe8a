//go:build unix && !linux

package testenv

import "syscall"

// childProcAttr puts a child in its own process group, so that signals reach
// all of it and none of the test's.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
