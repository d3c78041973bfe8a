package watchdog

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// watchParent returns a channel closed once the kernel reports that
// parent, the process that started this one, has exited, and a stop that
// releases the watch (the channel then never closes). The proof is a pidfd
// (readable once the process has exited), opened while os.Getppid() still
// names parent so it cannot be a recycled pid; having been reparented
// already is proof too.
func watchParent(parent int) (<-chan struct{}, func(), error) {
	dead := make(chan struct{})
	if parent <= 1 {
		return nil, nil, fmt.Errorf("watchdog: parent pid %d", parent)
	}
	fd, err := unix.PidfdOpen(parent, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.ENOSYS) {
		return nil, nil, ErrUnsupported
	}
	if err != nil && !errors.Is(err, unix.ESRCH) {
		return nil, nil, fmt.Errorf("watchdog: pidfd_open %d: %w", parent, err)
	}
	if err != nil || os.Getppid() != parent { // gone, and we were reparented
		if err == nil {
			_ = unix.Close(fd)
		}
		close(dead)
		return dead, func() {}, nil
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("watchdog: pidfd: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := rc.Read(func(fd uintptr) bool { return readable(int(fd)) })
		if err == nil { // readable: exited (a closed file fails instead)
			close(dead)
		}
	}()
	stop := func() {
		_ = f.Close() // wakes the wait with an error
		<-done
	}
	return dead, stop, nil
}

// readable polls fd once without waiting.
func readable(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP) != 0
}

// Supported reports whether this kernel can prove a process's death
// (pidfd_open, Linux 5.3+).
func Supported() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	_ = unix.Close(fd)
	return true
}
