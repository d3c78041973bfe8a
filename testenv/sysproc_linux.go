package testenv

import "syscall"

// childProcAttr puts a child in its own process group, so that signals reach
// all of it and none of the test's, and asks the kernel to kill it should the
// test process die without cleaning up (Pdeathsig fires when the OS thread
// that started the child exits; the Go runtime keeps its threads alive unless
// a goroutine exits while locked to one).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
