package devcli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/cli"
)

// daemonProc is one `zkelect shards` process started by the demo, with its
// output in a log file.
type daemonProc struct {
	member string
	cmd    *exec.Cmd
	log    *os.File
	done   chan struct{} // closed once the process has been reaped
}

// startDaemonProc starts exe with args, its output appended to logPath. The
// process gets its own process group, so a Ctrl-C at the terminal reaches
// only the demo, which stops the daemons itself.
func startDaemonProc(member, exe string, args []string, logPath string) (*daemonProc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open daemon log: %w", err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = cli.ChildProcAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start daemon %s: %w", member, err)
	}
	p := &daemonProc{member: member, cmd: cmd, log: f, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *daemonProc) pid() int { return p.cmd.Process.Pid }

// kill sends SIGKILL and waits for the process to be reaped.
func (p *daemonProc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM, waits up to grace, then kills.
func (p *daemonProc) stop(grace time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.kill()
	}
}

// pauseTree stops the daemon first (so it starts no new children), then
// every descendant; it returns the pids it stopped, daemon first.
func (p *daemonProc) pauseTree() ([]int, error) {
	if err := syscall.Kill(p.pid(), syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("SIGSTOP daemon %s: %w", p.member, err)
	}
	if err := waitStopped(p.pid()); err != nil {
		return []int{p.pid()}, err
	}
	pids := []int{p.pid()}
	for i := 0; i < len(pids); i++ {
		kids, err := childPIDs(pids[i])
		if err != nil {
			return pids, err
		}
		for _, k := range kids {
			if err := syscall.Kill(k, syscall.SIGSTOP); err == nil {
				pids = append(pids, k)
			}
		}
	}
	return pids, nil
}

// waitStopped waits (up to 5 s) until the kernel reports pid stopped, so
// it can fork no more children.
func waitStopped(pid int) error {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return fmt.Errorf("read state of pid %d: %w", pid, err)
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && b[i+2] == 'T' {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("pid %d did not stop within 5s", pid)
}

// resumePIDs sends SIGCONT to the given pids, daemon last, so its children are
// running again before it can act on anything.
func resumePIDs(pids []int) {
	for i := len(pids) - 1; i >= 0; i-- {
		_ = syscall.Kill(pids[i], syscall.SIGCONT)
	}
}

// childPIDs lists the children of pid from /proc/<pid>/task/*/children
// (Linux): every thread's children, since any thread may have forked.
func childPIDs(pid int) ([]int, error) {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil || len(files) == 0 {
		return nil, errors.New("cannot list child processes: the demo needs Linux's /proc")
	}
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited
		}
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, nil
}
