package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zkelect/zkelect/recipe/watchdog"
)

// escapeWait is the generous bound of every wait in these tests.
const escapeWait = 30 * time.Second

// escapees names the processes escapingWorker leaves outside its process
// group: a grandchild that called setsid, a daemon that forked twice and
// called setsid (reparented to the reaper), and a setsid grandchild that
// ignores SIGTERM.
var escapees = []string{"setsid", "daemon", "stubborn"}

// escapingWorker starts the escapees, waits until each has written its
// pid into the directory $1, then exits ($2 = exit) or runs until a
// SIGTERM.
const escapingWorker = `d=$1
setsid sh -c 'echo $$ > "$0/setsid.tmp" && mv "$0/setsid.tmp" "$0/setsid"; exec sleep 1000' "$d" &
(setsid sh -c 'echo $$ > "$0/daemon.tmp" && mv "$0/daemon.tmp" "$0/daemon"; exec sleep 1000' "$d" &)
setsid sh -c 'trap "" TERM; echo $$ > "$0/stubborn.tmp" && mv "$0/stubborn.tmp" "$0/stubborn"; while :; do sleep 1; done' "$d" &
while [ ! -e "$d/setsid" ] || [ ! -e "$d/daemon" ] || [ ! -e "$d/stubborn" ]; do sleep 0.01; done
[ "$2" = exit ] && exit 0
trap 'exit 0' TERM
while :; do sleep 0.01; done`

// startEscaping starts escapingWorker supervised, with mode as its $2 and
// w as its watchdog (nil: none).
func startEscaping(t *testing.T, dir, mode string, w *watchdog.Process) *Child {
	t.Helper()
	c, err := Start(Spec{Path: "/bin/sh", Args: []string{"-c", escapingWorker, "worker", dir, mode},
		Env: []string{"GORACE=atexit_sleep_ms=0"}, Watchdog: w})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// escapedPIDs waits until the worker's escapees have written their pids
// into dir and returns them, killing any still alive at cleanup (a
// failing test must not leave them behind).
func escapedPIDs(t *testing.T, dir string) map[string]int {
	t.Helper()
	pids := map[string]int{}
	deadline := time.Now().Add(escapeWait)
	for _, name := range escapees {
		for {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err == nil {
				pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
				if err != nil {
					t.Fatalf("pid file %s: %v", name, err)
				}
				pids[name] = pid
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the worker's %s process did not write its pid within %v", name, escapeWait)
			}
			time.Sleep(10 * time.Millisecond) // polling a file another process writes
		}
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			if running(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return pids
}

// running reports whether pid is a process that can still run (not gone,
// not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// awaitNoneRunning waits up to escapeWait for every pid to be gone and
// fails naming those still running, with what ended the leadership.
func awaitNoneRunning(t *testing.T, pids map[string]int, after string) {
	t.Helper()
	deadline := time.Now().Add(escapeWait)
	for {
		var left []string
		for name, pid := range pids {
			if running(pid) {
				left = append(left, fmt.Sprintf("%s (pid %d)", name, pid))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v still running %v after %s: they outlived the leadership they were started for", left, escapeWait, after)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc: the kernel offers no wait for non-children
	}
}

// TestStopEndsDescendantsOutsideTheGroup: a stop (a drain, a resign, a
// graceful stop of the daemon: Child.Stop) ends the processes the worker
// left outside its process group, a setsid grandchild and a double fork
// included: those that take the SIGTERM at once, the one ignoring it at
// the grace. They once outlived every stop.
func TestStopEndsDescendantsOutsideTheGroup(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	c := startEscaping(t, dir, "stay", nil)
	pids := escapedPIDs(t, dir)
	c.Stop(syscall.SIGTERM, time.Second)
	awaitNoneRunning(t, pids, "the stop")
}

// TestWorkerExitEndsItsDescendants: a worker that exits by itself takes
// what it left behind with it, outside its process group too.
func TestWorkerExitEndsItsDescendants(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	c := startEscaping(t, dir, "exit", nil)
	pids := escapedPIDs(t, dir)
	select {
	case <-c.Done():
	case <-time.After(escapeWait):
		c.Stop(syscall.SIGKILL, 0)
		t.Fatalf("the worker did not exit within %v", escapeWait)
	}
	if code := c.ExitCode(); code != 0 {
		t.Errorf("exit status %d; want the worker's 0", code)
	}
	awaitNoneRunning(t, pids, "the worker's exit")
}

// daemonEnv, set to a directory, makes this test binary a daemon that
// supervises escapingWorker with a watchdog (runEscapingDaemon).
const daemonEnv = "ZKELECT_TEST_ESCAPE_DAEMON"

// runEscapingDaemon is the daemon of TestDaemonKilledEndsDescendants: it
// starts a watchdog, supervises escapingWorker in dir with it, and waits
// to be killed.
func runEscapingDaemon(dir string) {
	w, err := watchdog.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "watchdog:", err)
		os.Exit(2)
	}
	if _, err := Start(Spec{Path: "/bin/sh", Args: []string{"-c", escapingWorker, "worker", dir, "stay"}, Watchdog: w}); err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		os.Exit(2)
	}
	select {}
}

// TestDaemonKilledEndsDescendants: a daemon killed with SIGKILL, with its
// watchdog, leaves nothing of its worker running, outside the worker's
// process group included: its reaper (by its parent-death signal) and the
// watchdog both kill the whole tree.
func TestDaemonKilledEndsDescendants(t *testing.T) {
	w, err := watchdog.Start()
	if err != nil {
		t.Skipf("no watchdog here: %v", err)
	}
	_ = w.Close()
	dir := t.TempDir()
	daemon := exec.Command(os.Args[0], "-test.run=^$")
	daemon.Env = append(os.Environ(), daemonEnv+"="+dir, "GORACE=atexit_sleep_ms=0")
	daemon.Stderr = os.Stderr
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = daemon.Process.Kill(); _ = daemon.Wait() })
	pids := escapedPIDs(t, dir)
	if err := daemon.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = daemon.Wait()
	awaitNoneRunning(t, pids, "the daemon's SIGKILL")
}
