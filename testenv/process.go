package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// processLogLines is how many output lines of a child a failed test shows.
const processLogLines = 200

// ErrProcessExited is returned by Process.WaitLine when the process exited
// before printing a matching line.
var ErrProcessExited = errors.New("testenv: process exited")

// Process is a child process started by a test, typically the test binary
// itself re-executed to play one participant, so that a test can pause,
// resume and kill a participant as a whole, the way an operator or a crash
// would. It runs in its own process group; signals go to the whole group.
// Its stdout and stderr are captured together, line by line.
type Process struct {
	name   string
	pid    int
	exited chan struct{}
	err    error // exit status, readable once exited is closed
	out    *lineBuffer
}

// StartProcess starts name with args, with env added to the test's
// environment, in a new process group. It calls t.Fatal when the process
// cannot start. At cleanup the process group is killed (SIGKILL) and
// reaped; when the test failed, the last 200 lines of its output are
// logged.
func StartProcess(t testing.TB, name string, args []string, env []string) *Process {
	t.Helper()
	out := newLineBuffer()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start %s: %v", name, err)
	}
	p := &Process{name: name, pid: cmd.Process.Pid, exited: make(chan struct{}), out: out}
	go func() {
		p.err = cmd.Wait()
		out.finish()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.Kill()
		if t.Failed() {
			t.Logf("testenv: output of %s (pid %d):\n%s", name, p.pid, tail(out.String(), processLogLines))
		}
	})
	return p
}

// PID returns the process id, which is also its process group id.
func (p *Process) PID() int { return p.pid }

// Exited returns a channel closed once the process has exited and been
// reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Signal sends sig to the process group. Signalling a process that has
// exited is not an error.
func (p *Process) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("testenv: signal %v is not a syscall.Signal", sig)
	}
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := signalGroup(p.pid, s); err != nil {
		return fmt.Errorf("signal %s (pid %d): %w", p.name, p.pid, err)
	}
	return nil
}

// Pause freezes the process group with SIGSTOP and, on Linux, returns once
// the process is stopped.
func (p *Process) Pause() error {
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	return awaitStopped(p.pid, true)
}

// Resume continues the process group with SIGCONT and, on Linux, returns
// once the process runs again.
func (p *Process) Resume() error {
	if err := p.Signal(syscall.SIGCONT); err != nil {
		return err
	}
	return awaitStopped(p.pid, false)
}

// Kill sends SIGKILL to the process group and waits until the process has
// been reaped. Killing a process that has exited is a no-op.
func (p *Process) Kill() error {
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.exited
	return nil
}

// Wait waits for the process to exit and returns its exit status (an
// *exec.ExitError for a non-zero status or a signal), or ctx's error.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.exited:
		return p.err
	case <-ctx.Done():
		return fmt.Errorf("wait for %s (pid %d): %w", p.name, p.pid, ctx.Err())
	}
}

// Output returns everything the process has written to stdout and stderr
// so far.
func (p *Process) Output() string { return p.out.String() }

// WaitLine waits for the next output line that match accepts, reading on
// from the line after the one the previous WaitLine call returned (from the
// start on the first call), and returns it. It returns ErrProcessExited
// when the process exits first, or ctx's error.
func (p *Process) WaitLine(ctx context.Context, match func(line string) bool) (string, error) {
	line, err := p.out.next(ctx, match)
	if err != nil {
		return "", fmt.Errorf("wait for a line from %s (pid %d): %w", p.name, p.pid, err)
	}
	return line, nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
