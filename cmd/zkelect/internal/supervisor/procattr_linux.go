package supervisor

import "syscall"

// ProcAttr puts a child in its own process group and asks the kernel to
// SIGKILL it if the supervisor dies first (a supervisor killed with SIGKILL
// can no longer stop it, and its leadership is about to end).
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
