//go:build unix && !linux

package main

import (
	"os/exec"
	"syscall"
)

// childCommand runs path with args in its own process group. Outside Linux
// there is no parent-death signal: a supervisor killed with SIGKILL leaves
// its child running.
func childCommand(path string, args []string) (*exec.Cmd, error) {
	cmd := exec.Command(path, args...)
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, nil
}

// childProcAttr puts a child in its own process group. Outside Linux there is
// no parent-death signal: a supervisor killed with SIGKILL leaves its child
// running.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// runReaper is Linux only: elsewhere children are started directly.
func runReaper([]string) (int, bool) { return 0, false }
