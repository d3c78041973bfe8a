// Package watchdog shortens failover after a crash: a process that
// outlives this one and, once the kernel proves this process dead, ends
// the ZooKeeper sessions it was handed, so their ephemeral znodes (the
// leaderships of recipe's candidates and partition's members) go at once
// instead of a session timeout later. Linux 5.3+ only; opt-in.
package watchdog

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	proc "github.com/zkelect/zkelect/internal/watchdog"
	"github.com/zkelect/zkelect/recipe"
)

// Arg, as the first argument, makes a program that calls Serve a watchdog
// (see Start). It is internal: nobody types it.
const Arg = "__zkelect-watchdog"

// exitWait bounds Close's wait for the watchdog process to exit.
const exitWait = 5 * time.Second

// Errors of Start and Process.Watch.
var (
	// ErrUnsupported is returned by Start where the kernel cannot prove a
	// process dead (outside Linux, or before Linux 5.3).
	ErrUnsupported = proc.ErrUnsupported
	// ErrTransport is returned by Watch for a session over TLS
	// (recipe.WithTLS) or a custom dialer (recipe.WithDialer): the
	// watchdog closes sessions with a plain TCP connect request carrying
	// the session's id and password, which must not go in clear where the
	// session itself does not. Such a session waits out its timeout after
	// a crash.
	ErrTransport = proc.ErrTransport
)

// Process is this process's watchdog: a process that outlives this one
// and, once the kernel proves this process dead (SIGKILL, a panic, an OOM
// kill: its pidfd reports the exit), ends the ZooKeeper sessions it was
// handed (Watch) on its behalf, so its ephemeral znodes go at once: its
// leaderships fail over in a few round trips instead of a session
// timeout. Before it closes anything it kills the process groups it was
// handed (Guard) and waits until none of their processes can run. A
// paused (SIGSTOPped) or slow process is alive, and its sessions are left
// alone; a lost machine or network still costs the session timeout.
// Safety: the process is dead, so no belief of it survives, and what
// acted for it in guarded groups is dead too; a leader paused rather than
// dead is fenced by its token as before. It closes sessions over plain
// TCP only, so it takes no session over TLS or a custom dialer
// (ErrTransport). What it is handed (ids, passwords, servers) reaches it
// over a pipe (its stdin), never its argv or environment.
type Process struct {
	cmd     *exec.Cmd
	pipe    io.WriteCloser
	handoff *proc.Handoff
	exited  chan struct{}

	mu        sync.Mutex
	closed    bool
	released  []func() // undo each handover, at Close
	closeOnce sync.Once
}

// Option configures Start.
type Option func(*config)

type config struct {
	command []string
	stderr  io.Writer
}

// WithCommand runs the watchdog as argv (Arg and this process's pid are
// appended); the program must call Serve first in main. Default: this
// executable.
func WithCommand(argv ...string) Option {
	return func(c *config) { c.command = argv }
}

// WithStderr sends the watchdog's error reports to w (default this
// process's stderr).
func WithStderr(w io.Writer) Option {
	return func(c *config) { c.stderr = w }
}

// Start starts the watchdog process of this process: by default this
// executable re-executed with Arg, so the program must call Serve first in
// main. The watchdog runs in a process group of its own (a terminal's
// Ctrl-C or a SIGSTOP of the job does not reach it). It returns
// ErrUnsupported outside Linux, or the error starting it. Close it when
// leaving on purpose.
func Start(opts ...Option) (*Process, error) {
	cfg := config{stderr: os.Stderr}
	for _, o := range opts {
		o(&cfg)
	}
	if !proc.Supported() {
		return nil, ErrUnsupported
	}
	if len(cfg.command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("watchdog: find this executable: %w", err)
		}
		cfg.command = []string{exe}
	}
	args := append(append([]string(nil), cfg.command[1:]...), Arg, strconv.Itoa(os.Getpid()))
	cmd := exec.Command(cfg.command[0], args...)
	cmd.Stderr = cfg.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("watchdog: start %s: %w", cfg.command[0], err)
	}
	w := &Process{cmd: cmd, pipe: pipe, handoff: proc.NewHandoff(pipe), exited: make(chan struct{})}
	go func() { // ends when the watchdog exits: after Close, or if it dies
		_ = cmd.Wait()
		close(w.exited)
	}()
	return w, nil
}

// Guard hands over a process group (by id, such as a child started with
// Setpgid) that acts on this process's leaderships: the watchdog kills it,
// and waits until it cannot run, before it closes any session. It returns
// an error if the watchdog is gone or closed.
func (w *Process) Guard(pgid int) error {
	return w.send(func() error { return w.handoff.Guard(pgid) })
}

// Unguard forgets a process group handed to Guard (it has exited).
func (w *Process) Unguard(pgid int) error {
	return w.send(func() error { return w.handoff.Unguard(pgid) })
}

// Watch hands over s's session, now and after every re-establishment
// (a new session after an expiry), until s is closed; s's siblings
// (recipe.Session.Sibling) opened later are handed over too. It returns
// ErrTransport for a session over TLS or a custom dialer (nothing is
// handed over), recipe.ErrClosed if the watchdog is closed, and
// recipe.ErrNilSession for a nil s.
func (w *Process) Watch(s *recipe.Session) error {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return recipe.ErrClosed
	}
	if err := s.HandOver(taker{w}); err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	taker{w}.Adopt(func() { _ = s.HandOver(nil) })
	return nil
}

func (w *Process) send(write func() error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return recipe.ErrClosed
	}
	if err := write(); err != nil {
		return fmt.Errorf("watchdog (pid %d): %w", w.cmd.Process.Pid, err)
	}
	return nil
}

// Close tells the watchdog to stop watching without closing any session
// (this process is leaving on purpose, closing its sessions itself) and
// waits, at most 5s, for it to exit. Idempotent; it returns nil, or the
// error telling the watchdog.
func (w *Process) Close() error {
	var err error
	w.closeOnce.Do(func() {
		w.mu.Lock()
		w.closed = true
		err = w.handoff.Bye()
		_ = w.pipe.Close()
		released := w.released
		w.released = nil
		w.mu.Unlock()
		for _, release := range released {
			release()
		}
		t := time.NewTimer(exitWait)
		defer t.Stop()
		select {
		case <-w.exited:
		case <-t.C:
			_ = w.cmd.Process.Kill()
			<-w.exited
		}
	})
	if err != nil {
		return fmt.Errorf("watchdog: close: %w", err)
	}
	return nil
}

// taker is w as the Taker a recipe.Session hands its sessions to, in the
// order of its events.
type taker struct{ w *Process }

func (t taker) Session(c proc.Credentials) {
	_ = t.w.send(func() error { return t.w.handoff.Session(c) })
}

func (t taker) Closed(id int64) {
	_ = t.w.send(func() error { return t.w.handoff.Closed(id) })
}

func (t taker) Adopt(release func()) {
	t.w.mu.Lock()
	if !t.w.closed {
		t.w.released = append(t.w.released, release)
		t.w.mu.Unlock()
		return
	}
	t.w.mu.Unlock()
	release()
}
