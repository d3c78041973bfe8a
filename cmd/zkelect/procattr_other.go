//go:build unix && !linux

package main

import "syscall"

// childProcAttr puts a child in its own process group. Outside Linux there is
// no parent-death signal: a supervisor killed with SIGKILL leaves its child
// running.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
