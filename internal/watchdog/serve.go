package watchdog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Defaults of Config.
const (
	// DefaultCloseTimeout bounds the closing of all the dead parent's
	// sessions.
	DefaultCloseTimeout = 10 * time.Second
	// DefaultGroupTimeout bounds the wait for killed process groups.
	DefaultGroupTimeout = 5 * time.Second
	// drainLimit bounds the read of what the dead parent left in the pipe
	// (its end arrives with the exit unless another process holds the
	// pipe's write end).
	drainLimit = time.Second
)

// ErrUnsupported is returned by Serve where the kernel cannot prove a
// process's death (outside Linux, or a Linux older than 5.3 without
// pidfd_open).
var ErrUnsupported = errors.New("watchdog: proof of a process's death needs Linux 5.3+ (pidfd_open)")

// Config configures Serve.
type Config struct {
	// Parent is the pid of the process that started this one, as that
	// process passed it (its own os.Getpid()), never read back with
	// os.Getppid(): a parent that already died would name another process.
	Parent int
	// In is the handoff pipe from the parent (Handoff's writer).
	In io.Reader
	// Close ends one session on the servers (resuming it with its
	// password and sending closeSession); required.
	Close func(ctx context.Context, c Credentials) error
	// CloseTimeout bounds the closing of all sessions (default
	// DefaultCloseTimeout).
	CloseTimeout time.Duration
	// GroupTimeout bounds the wait for the guarded process groups to be
	// empty after they were killed (default DefaultGroupTimeout); a group
	// still there by then leaves every session to its timeout.
	GroupTimeout time.Duration
}

// Outcome says what Serve did.
type Outcome struct {
	// ParentDied is true once the kernel reported the parent's exit.
	ParentDied bool
	// Closed are the sessions closed on its behalf; Errors those that
	// could not be (the error wraps the session id).
	Closed []int64
	Errors []error
}

// Serve watches the parent until it says bye (Outcome.ParentDied false),
// ctx ends (ctx's error), or the kernel reports its exit; then it kills the
// process groups the parent guarded, waits until the kernel reports each
// empty (a process that could still act on a leadership keeps every
// session to its timeout: Outcome.Errors says so), and closes every session
// the parent handed over and did not close itself. A paused (SIGSTOPped) parent is alive: Serve waits on.
// The end of In alone proves nothing: Serve waits for the proof after it.
// It returns ErrUnsupported where there is no proof of death, before
// reading anything. Its reader of In ends when In does.
func Serve(ctx context.Context, cfg Config) (Outcome, error) {
	if cfg.Close == nil || cfg.In == nil {
		return Outcome{}, errors.New("watchdog: Serve needs In and Close")
	}
	death, stop, err := watchParent(cfg.Parent)
	if err != nil {
		return Outcome{}, err
	}
	defer stop()
	book := NewBook()
	read := make(chan error, 1)
	go func() { read <- book.Read(cfg.In) }()
	var readErr error
	select {
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	case readErr = <-read:
		if book.Bye() {
			return Outcome{}, nil
		}
		select { // the pipe ended: a death, or a parent that dropped it
		case <-death:
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		}
	case <-death:
		t := time.NewTimer(drainLimit)
		select { // everything the parent wrote is in the pipe: read it
		case readErr = <-read:
		case <-t.C:
		}
		t.Stop()
	}
	if book.Bye() {
		return Outcome{}, nil
	}
	out := Outcome{ParentDied: true}
	if readErr != nil {
		out.Errors = append(out.Errors, readErr)
	}
	if err := killGroups(ctx, book.Groups(), orDefault(cfg.GroupTimeout, DefaultGroupTimeout)); err != nil {
		out.Errors = append(out.Errors, err)
		return out, nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), orDefault(cfg.CloseTimeout, DefaultCloseTimeout))
	defer cancel()
	for _, c := range book.Sessions() {
		if err := cfg.Close(cctx, c); err != nil {
			out.Errors = append(out.Errors, fmt.Errorf("close session 0x%x: %w", uint64(c.ID), err))
			continue
		}
		out.Closed = append(out.Closed, c.ID)
	}
	return out, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
