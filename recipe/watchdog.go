package recipe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/zkelect/zkelect/internal/watchdog"
	"github.com/zkelect/zkelect/internal/zkconn"
)

// WatchdogArg, as the first argument, makes a program that calls
// ServeWatchdog a watchdog (see StartWatchdog). It is internal: nobody
// types it.
const WatchdogArg = "__zkelect-watchdog"

// watchdogExitWait bounds Close's wait for the watchdog process to exit.
const watchdogExitWait = 5 * time.Second

// ErrWatchdogUnsupported is returned by StartWatchdog where the kernel
// cannot prove a process dead (outside Linux, or before Linux 5.3).
var ErrWatchdogUnsupported = watchdog.ErrUnsupported

// ErrWatchdogTransport is returned by Watch for a session over TLS
// (WithTLS) or a custom dialer (WithDialer): the watchdog closes sessions
// with a plain TCP connect request carrying the session's id and
// password, which must not go in clear where the session itself does not.
// Such a session is left to its timeout after a crash.
var ErrWatchdogTransport = errors.New("recipe: the watchdog closes sessions over plain TCP only, not this session's TLS or dialer")

// Watchdog is a process that outlives this one and, once the kernel proves
// this process dead (SIGKILL, a panic, an OOM kill: its pidfd reports the
// exit), ends the ZooKeeper sessions it was handed (Watch) on its behalf,
// so its ephemeral znodes go at once: its leaderships fail over in a few
// round trips instead of a session timeout. Before it closes anything it
// kills the process groups it was handed (Guard) and waits until none of
// their processes can run. A paused (SIGSTOPped) or slow process is alive,
// and its sessions are left alone; a lost machine or network still costs
// the session timeout. Safety: the process is dead, so no belief of it
// survives, and what acted for it in guarded groups is dead too; a leader
// paused rather than dead is fenced by its token as before. Opt-in: start
// one per process with StartWatchdog. Linux 5.3+ only. It closes sessions
// over plain TCP only, so it takes no session over TLS or a custom dialer
// (Watch returns ErrWatchdogTransport): their id and password would go in
// clear, and after a crash such sessions wait out their timeout. What it
// is handed (ids, passwords, servers) reaches it over a pipe (its stdin),
// never its argv or environment.
type Watchdog struct {
	cmd     *exec.Cmd
	pipe    io.WriteCloser
	handoff *watchdog.Handoff
	exited  chan struct{}

	mu        sync.Mutex
	closed    bool
	sessions  []*Session
	closeOnce sync.Once
}

// WatchdogOption configures StartWatchdog.
type WatchdogOption func(*watchdogConfig)

type watchdogConfig struct {
	command []string
	stderr  io.Writer
}

// WithWatchdogCommand runs the watchdog as argv (WatchdogArg and this
// process's pid are appended); the program must call ServeWatchdog first
// in main. Default: this executable.
func WithWatchdogCommand(argv ...string) WatchdogOption {
	return func(c *watchdogConfig) { c.command = argv }
}

// WithWatchdogStderr sends the watchdog's error reports to w (default
// this process's stderr).
func WithWatchdogStderr(w io.Writer) WatchdogOption {
	return func(c *watchdogConfig) { c.stderr = w }
}

// StartWatchdog starts the watchdog process of this process: by default
// this executable re-executed with WatchdogArg, so the program must call
// ServeWatchdog first in main. The watchdog runs in a process group of its
// own (a terminal's Ctrl-C or a SIGSTOP of the job does not reach it). It
// returns ErrWatchdogUnsupported outside Linux, or the error starting it.
// Close it when leaving on purpose.
func StartWatchdog(opts ...WatchdogOption) (*Watchdog, error) {
	cfg := watchdogConfig{stderr: os.Stderr}
	for _, o := range opts {
		o(&cfg)
	}
	if !watchdog.Supported() {
		return nil, ErrWatchdogUnsupported
	}
	if len(cfg.command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("watchdog: find this executable: %w", err)
		}
		cfg.command = []string{exe}
	}
	args := append(append([]string(nil), cfg.command[1:]...), WatchdogArg, strconv.Itoa(os.Getpid()))
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
	w := &Watchdog{cmd: cmd, pipe: pipe, handoff: watchdog.NewHandoff(pipe), exited: make(chan struct{})}
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
func (w *Watchdog) Guard(pgid int) error {
	return w.send(func() error { return w.handoff.Guard(pgid) })
}

// Unguard forgets a process group handed to Guard (it has exited).
func (w *Watchdog) Unguard(pgid int) error {
	return w.send(func() error { return w.handoff.Unguard(pgid) })
}

// Watch hands over s's session, now and after every re-establishment
// (a new session after an expiry), until s is closed. It returns
// ErrWatchdogTransport for a session over TLS or a custom dialer (nothing
// is handed over), ErrClosed if the watchdog is closed.
func (w *Watchdog) Watch(s *Session) error {
	if s.cfg.tls != nil || s.cfg.customDialer {
		return ErrWatchdogTransport
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.sessions = append(w.sessions, s)
	w.mu.Unlock()
	s.handOver(w)
	return nil
}

// session hands over c; closedSession tells the watchdog a session ended.
// Both are called by a watched Session, in the order of its events.
func (w *Watchdog) session(c watchdog.Credentials) {
	_ = w.send(func() error { return w.handoff.Session(c) })
}

func (w *Watchdog) closedSession(id int64) {
	_ = w.send(func() error { return w.handoff.Closed(id) })
}

func (w *Watchdog) send(write func() error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
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
func (w *Watchdog) Close() error {
	var err error
	w.closeOnce.Do(func() {
		w.mu.Lock()
		w.closed = true
		err = w.handoff.Bye()
		_ = w.pipe.Close()
		sessions := w.sessions
		w.sessions = nil
		w.mu.Unlock()
		for _, s := range sessions {
			s.handOver(nil)
		}
		t := time.NewTimer(watchdogExitWait)
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

// ServeWatchdog runs the watchdog when args (os.Args) ask for it (see
// StartWatchdog), returning its exit status and true; otherwise it returns
// false at once. Call it first in main of a program whose Watchdog runs
// its own executable. The watchdog exits when its parent closes it, or
// once it has closed the sessions of its dead parent.
func ServeWatchdog(args []string) (int, bool) {
	if len(args) < 2 || args[1] != WatchdogArg {
		return 0, false
	}
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "zkelect watchdog: want the parent's pid")
		return 2, true
	}
	parent, err := strconv.Atoi(args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "zkelect watchdog: parent pid %q: %v\n", args[2], err)
		return 2, true
	}
	out, err := watchdog.Serve(context.Background(), watchdog.Config{
		Parent: parent, In: os.Stdin,
		Close: func(ctx context.Context, c watchdog.Credentials) error {
			return zkconn.CloseSession(ctx, c.Servers, c.ID, c.Password, nil)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkelect watchdog:", err)
		return 1, true
	}
	for _, e := range out.Errors {
		if !errors.Is(e, zkconn.ErrUnknownSession) {
			fmt.Fprintf(os.Stderr, "zkelect watchdog: parent %d died: %v\n", parent, e)
		}
	}
	return 0, true
}
