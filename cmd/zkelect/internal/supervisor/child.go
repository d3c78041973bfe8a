package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zkelect/zkelect/recipe/watchdog"
)

// Spec describes a command to supervise.
type Spec struct {
	Path string   // program; looked up in $PATH when it has no slash
	Args []string // arguments after the program name
	Env  []string // added to the parent's environment
	// DropEnv names variables of the parent's environment the child does
	// not inherit.
	DropEnv []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	// Watchdog, if set, is handed the child's process group while it
	// runs: it kills the group before it closes the session of a killed
	// supervisor.
	Watchdog *watchdog.Process
}

// Child is one supervised process. It runs in its own process group under
// a reaper that is a child subreaper (see childCommand): a stop's signal
// reaches the group, and the reaper passes it on to descendants that left
// the group (setsid, a double fork); the kill at the grace, the command's
// own exit and (on Linux) the supervisor's death end the whole tree, so
// nothing it started outlives the leadership it was started for. What
// remains: a descendant that changed its user (no signal of ours reaches
// it), and descendants of a reaper killed from outside (by the OOM killer)
// before it could kill them.
type Child struct {
	cmd *exec.Cmd
	// started is closed once the command is in the child's process group
	// (or never will be), so that a signal to the group reaches it.
	started chan struct{}
	done    chan struct{} // closed once the process has exited and been reaped
	err     error         // result of Wait; read after done is closed
}

// childEnviron is this process's environment without the variables named
// in drop (the ZooKeeper credentials: the child does the leader's work, not
// the group's ZooKeeper administration).
func childEnviron(drop []string) []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(drop, name)
	})
}

// Start starts spec. The returned child owns one goroutine that reaps
// the process; it ends when the process exits.
func Start(spec Spec) (*Child, error) {
	cmd, started, err := childCommand(spec.Path, spec.Args)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	cmd.Env = append(childEnviron(spec.DropEnv), spec.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Stdin, spec.Stdout, spec.Stderr
	err = cmd.Start()
	for _, f := range cmd.ExtraFiles {
		f.Close() // the child's ends of the started pipe (see childCommand)
	}
	if err != nil {
		if started != nil {
			started.Close()
		}
		return nil, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	c := &Child{cmd: cmd, started: make(chan struct{}), done: make(chan struct{})}
	if spec.Watchdog != nil {
		_ = spec.Watchdog.Guard(cmd.Process.Pid) // a watchdog gone leaves the session to its timeout
	}
	go func() {
		if started != nil {
			_, _ = io.Copy(io.Discard, started) // until EOF: the reaper started the command, or exited
			started.Close()
		}
		close(c.started)
		c.err = cmd.Wait()
		// Whatever the leader process left behind in its group goes with it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if spec.Watchdog != nil {
			_ = spec.Watchdog.Unguard(cmd.Process.Pid)
		}
		close(c.done)
	}()
	return c, nil
}

// PID returns the child's process id (also its process group id).
func (c *Child) PID() int { return c.cmd.Process.Pid }

// Done is closed once the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Signal sends sig to the child's process group now, whether or not its
// command has started (use Stop to ask it to exit). Signalling a child that
// has already exited is not an error.
func (c *Child) Signal(sig syscall.Signal) error {
	select {
	case <-c.done:
		return nil
	default:
	}
	if err := syscall.Kill(-c.PID(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to process group %d: %w", sig, c.PID(), err)
	}
	return nil
}

// Stop asks the child to exit with sig (SIGTERM, or SIGINT forwarded from
// the supervisor) and, if it is still running after grace, kills its process
// group with SIGKILL. It returns once the child has exited; calling it again,
// or after the child exited, returns at once.
//
// A child stopped just after it was started may not have started its
// command yet: a signal then would reach only the reaper (see
// childCommand), and the command would run until the SIGKILL without ever
// seeing sig. So Stop first waits, up to grace, until the command is in the
// group, and only then sends sig and gives the command its full grace.
func (c *Child) Stop(sig syscall.Signal, grace time.Duration) {
	t := time.NewTimer(grace)
	select {
	case <-c.started:
	case <-t.C: // a reaper that cannot start its command: signal it anyway
	}
	t.Stop()
	_ = c.Signal(sig)
	c.WaitGrace(grace)
}

// WaitGrace waits up to grace for the child to exit, then kills its process
// group and waits for it to be reaped.
func (c *Child) WaitGrace(grace time.Duration) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
		return
	case <-t.C:
	}
	c.kill()
	<-c.done
}

// kill kills the child's whole tree: the descendants of its reaper that
// left its process group (setsid, a double fork; killTree), then the
// group, the reaper included. The reaper is killed last: while it lives,
// orphans below it are its own, not init's.
func (c *Child) kill() {
	select {
	case <-c.done:
		return
	default:
	}
	killTree(c.PID())
	_ = c.Signal(syscall.SIGKILL)
}

// ExitCode returns the child's exit status once Done is closed: its exit
// code, or 128 plus the signal number when a signal ended it (the shell's
// convention). A child that could not be waited for reports 1.
func (c *Child) ExitCode() int {
	<-c.done
	if c.err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(c.err, &ee) {
		return 1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}
