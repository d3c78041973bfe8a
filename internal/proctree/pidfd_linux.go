package proctree

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// handle is a listed process pinned against PID reuse: a pidfd, or -1
// where the kernel has none (then pid is signalled by number).
type handle struct {
	pid int
	fd  int
}

// pin opens a pidfd on p.PID and checks that it names the process that
// was listed (same start time). It returns an error wrapping ErrReused
// when the PID now names another process, and one wrapping the system
// call's error when the process is gone.
func pin(p Process) (handle, error) {
	fd, err := unix.PidfdOpen(p.PID, 0)
	switch {
	case err == nil:
	case byNumber(err):
		fd = -1 // no pidfd (old kernel, seccomp, out of descriptors): check, then signal by number
	default:
		return handle{}, fmt.Errorf("proctree: pidfd of %d: %w", p.PID, err)
	}
	h := handle{pid: p.PID, fd: fd}
	now, ok := Stat(p.PID)
	if !ok || now.Start != p.Start {
		h.close()
		return handle{}, fmt.Errorf("proctree: pid %d: %w", p.PID, ErrReused)
	}
	return h, nil
}

// byNumber reports whether pin falls back to the PID's number after
// pidfd_open failed with err: for every error but ESRCH (the process is
// gone). ENOSYS and EPERM say this kernel or sandbox has no pidfds;
// EMFILE and ENFILE that a large tree took the descriptors. Signalling by
// number after the start-time check is what Kill did before pidfds, and
// better than leaving the process running.
func byNumber(err error) bool { return !errors.Is(err, unix.ESRCH) }

// signal sends sig to the pinned process.
func (h handle) signal(sig syscall.Signal) error {
	if h.fd < 0 {
		return syscall.Kill(h.pid, sig)
	}
	return unix.PidfdSendSignal(h.fd, sig, nil, 0)
}

// close releases the pidfd; it is idempotent on a handle without one.
func (h handle) close() {
	if h.fd >= 0 {
		_ = unix.Close(h.fd)
	}
}

// fallbackPoll is how soon Kill lists /proc again when some process it
// signalled has no pidfd to wait on.
const fallbackPoll = 2 * time.Millisecond

// waitExits waits until every pinned process has exited (its pidfd is
// readable), ctx ends, or round passes, whichever is first. When some
// handle has no pidfd, or there is none at all (nothing could be pinned),
// it waits fallbackPoll at most, and then the whole of it: the caller
// lists /proc again to see those gone, and does not spin meanwhile.
func waitExits(ctx context.Context, hs []handle, round time.Duration) {
	fds := make([]unix.PollFd, 0, len(hs))
	for _, h := range hs {
		if h.fd >= 0 {
			fds = append(fds, unix.PollFd{Fd: int32(h.fd), Events: unix.POLLIN})
		}
	}
	poll := len(fds) < len(hs) || len(hs) == 0
	if poll {
		round = min(round, fallbackPoll)
	}
	deadline := time.Now().Add(round)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	for len(fds) > 0 && ctx.Err() == nil {
		wait := time.Until(deadline)
		if wait <= 0 {
			return
		}
		n, err := unix.Poll(fds, int(wait.Milliseconds())+1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if n > 0 {
			fds = pending(fds)
		}
	}
	if poll {
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
	}
}

// pending keeps the pidfds whose process has not exited yet.
func pending(fds []unix.PollFd) []unix.PollFd {
	out := fds[:0]
	for _, f := range fds {
		if f.Revents == 0 {
			out = append(out, unix.PollFd{Fd: f.Fd, Events: unix.POLLIN})
		}
	}
	return out
}
