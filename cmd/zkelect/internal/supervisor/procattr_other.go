//go:build unix && !linux

package supervisor

import (
	"os"
	"os/exec"
	"syscall"
)

// childCommand runs path with args in its own process group. Outside Linux
// there is no parent-death signal: a supervisor killed with SIGKILL leaves
// its child running. There is no reaper either, so the command is in its
// group as soon as it has started: started is nil.
func childCommand(path string, args []string) (cmd *exec.Cmd, started *os.File, err error) {
	cmd = exec.Command(path, args...)
	if cmd.Err != nil {
		return nil, nil, cmd.Err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, nil, nil
}

// ProcAttr puts a child in its own process group. Outside Linux there is
// no parent-death signal: a supervisor killed with SIGKILL leaves its child
// running.
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// RunReaper is Linux only: elsewhere children are started directly.
func RunReaper([]string) (int, bool) { return 0, false }
