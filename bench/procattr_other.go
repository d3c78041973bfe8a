//go:build unix && !linux

package bench

import "syscall"

// peerProcAttr puts a candidate process in its own process group (a kill
// reaches what it started). Outside Linux a benchmark killed with SIGKILL
// leaves its candidates running.
func peerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
