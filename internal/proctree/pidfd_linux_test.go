package proctree

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPinRefusesAPIDThatNamesAnotherProcess: a PID listed for one process
// and found naming another (its start time differs: the listed one exited
// and the PID was reused) is not signalled, and the process now holding it
// runs on.
func TestPinRefusesAPIDThatNamesAnotherProcess(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	now, ok := Stat(cmd.Process.Pid)
	if !ok {
		t.Fatalf("Stat(%d) found nothing for a running child", cmd.Process.Pid)
	}
	listed := now
	listed.Start-- // listed earlier, as another process under the same PID
	if _, err := pin(listed); !errors.Is(err, ErrReused) {
		t.Fatalf("pin of a PID reused since it was listed = %v, want ErrReused", err)
	}
	h, err := pin(now)
	if err != nil {
		t.Fatalf("pin of the process as it is: %v", err)
	}
	defer h.close()
	if p, ok := Stat(cmd.Process.Pid); !ok || !p.Live {
		t.Fatal("the process holding the reused PID was ended")
	}
	if err := h.signal(syscall.SIGKILL); err != nil {
		t.Fatalf("signal through the pin: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitExits(ctx, []handle{h}, 30*time.Second)
	if ctx.Err() != nil {
		t.Fatal("the killed process did not exit within 30s")
	}
}

// TestParseStat reads the fields the package uses from /proc/<pid>/stat
// lines, a command name with spaces and parentheses among them.
func TestParseStat(t *testing.T) {
	// Fields 6-19 (session ... nice), then num_threads (20), itrealvalue,
	// starttime (22), vsize.
	line := func(comm, state, threads, start string) string {
		return fmt.Sprintf("42 (%s) %s 7 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 %s 0 %s 0", comm, state, threads, start)
	}
	tests := []struct {
		name string
		in   string
		want Process
		ok   bool
	}{
		{"running", line("sleep", "S", "1", "1234"), Process{PID: 42, PPID: 7, PGID: 9, Start: 1234, Live: true}, true},
		{"comm with ') ('", line("a) (b", "R", "1", "5"), Process{PID: 42, PPID: 7, PGID: 9, Start: 5, Live: true}, true},
		{"zombie", line("x", "Z", "1", "5"), Process{PID: 42, PPID: 7, PGID: 9, Start: 5}, true},
		{"zombie leader with live threads", line("x", "Z", "3", "5"), Process{PID: 42, PPID: 7, PGID: 9, Start: 5, Live: true}, true},
		{"cut short", "42 (x) S 7 9", Process{}, false},
		{"no comm", "42 x S 7 9", Process{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseStat(42, tc.in)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("parseStat(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestWaitExitsWithNothingToWaitOnPauses: when no process of a round
// could be pinned (every pidfd_open failed), waitExits still pauses
// fallbackPoll before Kill lists /proc again, instead of returning at
// once and turning Kill into a loop that spins a core until ctx ends. A
// timer never fires early, so the lower bound holds on a loaded machine.
func TestWaitExitsWithNothingToWaitOnPauses(t *testing.T) {
	start := time.Now()
	waitExits(context.Background(), nil, time.Hour)
	if got := time.Since(start); got < fallbackPoll {
		t.Fatalf("waitExits with no handle returned after %v, want a pause of at least %v", got, fallbackPoll)
	}
}

// TestPinFallsBackToTheNumberUnlessGone: only ESRCH from pidfd_open means
// the process is gone; any other refusal (no pidfds in this kernel or
// sandbox, out of descriptors in a large tree) signals by number after the
// start-time check, as before pidfds, instead of leaving the process
// unsignalled.
func TestPinFallsBackToTheNumberUnlessGone(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{unix.ESRCH, false},
		{unix.ENOSYS, true},
		{unix.EPERM, true},
		{unix.EMFILE, true},
		{unix.ENFILE, true},
		{unix.ENOMEM, true},
		{unix.EINVAL, true},
	} {
		if got := byNumber(c.err); got != c.want {
			t.Errorf("byNumber(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
