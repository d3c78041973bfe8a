package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/zkelect/zkelect/internal/proctree"
)

// reaperArg, as the first argument, makes zkelect the reaper of one child
// (see childCommand). It is internal: nobody types it.
const reaperArg = "__zkelect-reaper"

// childCommand returns the command that runs path with args as a supervised
// child. The kernel can kill a child whose parent dies (a parent-death
// signal), but not the processes that child started: a supervisor killed
// with SIGKILL would leave them acting after the leadership ended. So the
// child is zkelect itself as a reaper, leading its own process group and a
// child subreaper (orphans below it become its children, not init's): it
// runs path in that group, passes the signals of a stop on to descendants
// that left the group (setsid, a double fork), and kills its whole tree
// (internal/proctree) when path exits and when zkelect dies (its
// parent-death signal). Its exit status is the command's.
//
// The reaper catches the signals sent to its group, so one sent before it
// has started path would reach nobody else and path would run on until the
// SIGKILL. The reaper therefore closes the write end of a pipe (its fd 3,
// cmd.ExtraFiles[0], to be closed by the caller once cmd has started) when
// path is in the group or never will be; the returned started file is the
// read end, at EOF from then on. A stop waits for it before signalling.
func childCommand(path string, args []string) (cmd *exec.Cmd, started *os.File, err error) {
	resolved, err := exec.LookPath(path)
	if err != nil {
		return nil, nil, err
	}
	started, startedW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("reaper pipe: %w", err)
	}
	reaperArgs := append([]string{reaperArg, strconv.Itoa(os.Getpid()), resolved, path}, args...)
	// /proc/self/exe is this very binary, even if the file was replaced.
	cmd = exec.Command("/proc/self/exe", reaperArgs...)
	cmd.Args[0] = os.Args[0]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.ExtraFiles = []*os.File{startedW}
	return cmd, started, nil
}

// reaperStartedFD is the reaper's end of the started pipe (see childCommand).
const reaperStartedFD = 3

// RunReaper runs the reaper when args (os.Args) ask for it, reporting the
// exit status and true; otherwise it returns false at once.
func RunReaper(args []string) (int, bool) {
	if len(args) < 2 || args[1] != reaperArg {
		return 0, false
	}
	code, err := reap(args[2:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkelect:", err)
	}
	return code, true
}

// reap runs [parent-pid, path, argv0, args...]: path in this process group,
// until it exits, killing the group if the parent dies first. Signals sent
// to the group (a stop, a forwarded SIGINT) reach the command directly; the
// reaper only survives them. It closes its started pipe (fd 3) once path is
// in the group, or on its way out if path never starts.
func reap(args []string) (int, error) {
	if len(args) < 3 {
		return 127, errors.New("reaper: want parent pid, path and argv[0]")
	}
	parent, err := strconv.Atoi(args[0])
	if err != nil {
		return 127, fmt.Errorf("reaper: parent pid %q: %w", args[0], err)
	}
	// Not inherited by path: its EOF must mean that path has started.
	syscall.CloseOnExec(reaperStartedFD)
	started := os.NewFile(reaperStartedFD, "started")
	defer started.Close()
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if os.Getppid() != parent {
		killAll()
		return 137, nil
	}
	// Orphans of the command (the worker of `sh -c './worker'` once the
	// shell has died of the SIGTERM sent to the group) become our children,
	// so that a stop waits for them.
	if err := setChildSubreaper(); err != nil {
		return 127, fmt.Errorf("reaper: %w", err)
	}
	cmd := &exec.Cmd{Path: args[1], Args: args[2:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		return 127, fmt.Errorf("start %s: %w", args[1], err)
	}
	started.Close() // path is in the group: a stop may signal it now
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	signalled := false
	for {
		// The parent may have died between the last check and Start.
		if os.Getppid() != parent {
			killAll() // this process included
		}
		select {
		case sig := <-sigs:
			signalled = true
			// The group got it from the supervisor; descendants that left
			// the group (setsid, a double fork) get it from here.
			proctree.Signal(os.Getpid(), sig.(syscall.Signal), syscall.Getpgrp())
		case <-done:
			code := statusOf(cmd.ProcessState)
			if signalled || len(sigs) > 0 || code > 128 {
				// A stop: the rest of the tree got the same signal and
				// may be running its handler (a TERM trap). Wait for it;
				// the supervisor kills the tree after its grace.
				reapOrphans()
			}
			killTree(os.Getpid()) // whatever the command left behind goes with it
			return code, nil
		}
	}
}

// killAll kills every descendant of this process, in its process group or
// not (killTree), then its process group, this process included.
func killAll() {
	killTree(os.Getpid())
	_ = syscall.Kill(0, syscall.SIGKILL)
}

// setChildSubreaper makes this process the reaper of its orphaned
// descendants (prctl PR_SET_CHILD_SUBREAPER).
func setChildSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	return nil
}

// reapOrphans waits for every remaining child (the orphans reparented to
// us) to exit.
func reapOrphans() {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // ECHILD: none left
			return
		}
	}
}

// statusOf is the shell's exit status of a process: its exit code, or 128
// plus the number of the signal that ended it.
func statusOf(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
