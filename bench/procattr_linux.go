package bench

import "syscall"

// peerProcAttr puts a candidate process in its own process group (a kill
// reaches what it started) and has the kernel kill it if the benchmark dies.
func peerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
