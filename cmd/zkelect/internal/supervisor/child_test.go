package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestChildStoppedAsItStartsGetsSIGTERM stops supervised children at
// moments spread over their start, where the reaper (see childCommand) has
// begun catching signals but may not have started its command yet: every
// worker that got to run must get the SIGTERM and run its TERM handler, never
// run on unsignalled until the SIGKILL at the grace. (A stop sent to the
// group before the command was in it reached the reaper alone: a shards
// daemon stopped just after a handoff gave it a shard left that shard's
// worker to be killed.)
func TestChildStoppedAsItStartsGetsSIGTERM(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	const grace = 10 * time.Second
	// The worker marks its start only once its TERM handler is set, so a
	// "started" without a "stopped" is a worker that never saw the SIGTERM.
	worker := "trap 'echo stopped >> \"$1\"; exit 0' TERM; echo started >> \"$1\"; while :; do sleep 0.01; done"
	start := func(events string) *Child {
		t.Helper()
		c, err := Start(Spec{Path: "/bin/sh", Args: []string{"-c", worker, "worker", events},
			Env: []string{"GORACE=atexit_sleep_ms=0"}}) // this test binary is the reaper: no second at its exit under -race
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// The stops are placed around the time a child takes to start its
	// command here, under this load (the median of the last few starts),
	// where the reaper begins to catch signals.
	var took []time.Duration
	median := func() time.Duration {
		last := slices.Clone(took[max(0, len(took)-5):])
		slices.Sort(last)
		return last[len(last)/2]
	}
	const n = 80
	for i := range n + 3 {
		events := filepath.Join(dir, fmt.Sprint("events", i))
		t0 := time.Now()
		c := start(events)
		startedAfter := make(chan time.Duration, 1)
		go func() { <-c.started; startedAfter <- time.Since(t0) }()
		var after time.Duration
		if i < 3 {
			<-c.started // calibration
		} else {
			// Not a synchronisation: this places the stop at a point of the
			// child's start, from 0.85 to 1.25 times its usual length; the
			// assertion below holds wherever it lands.
			after = median() * time.Duration(85+(i-3)%40) / 100
			time.Sleep(after)
		}
		c.Stop(syscall.SIGTERM, grace)
		took = append(took, <-startedAfter)
		b, _ := os.ReadFile(events)
		got := strings.Fields(string(b))
		if slices.Contains(got, "started") && !slices.Contains(got, "stopped") || c.ExitCode() == 128+int(syscall.SIGKILL) {
			t.Fatalf("stop %d (%s after the start; a start takes about %s): the worker's events %q, exit status %d: "+
				"the worker ran but never got the SIGTERM, and was killed at the grace", i, after, median(), got, c.ExitCode())
		}
	}
}
