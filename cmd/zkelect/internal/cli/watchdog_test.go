package cli

import (
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// watchdogSessionTimeout is the session the watchdog tests' processes ask
// for: long (the server allows 6 s), so that a failover well before it can
// only be the watchdog's doing.
const watchdogSessionTimeout = 6 * time.Second

// TestRunKilledLeaderFailsOverBeforeSessionTimeout: `run` killed with
// SIGKILL while leading: its watchdog kills the child's group and closes
// the session, so another run's child starts well before the session could
// have expired, and the killed leader's child is dead by then.
func TestRunKilledLeaderFailsOverBeforeSessionTimeout(t *testing.T) {
	s := testSession(t)
	election, events := testPath(t), filepath.Join(t.TempDir(), "events")
	procs := startThree(t, s, election, events, zkc.ConnectString(), "--session-timeout", watchdogSessionTimeout.String())
	childPID, _ := strconv.Atoi(readEvents(t, events)[0].fields[4])

	start := time.Now()
	procs["p1"].signal(syscall.SIGKILL)
	eventually(t, watchdogSessionTimeout/2, "a child to start elsewhere within half the session timeout (only a watchdog closing the killed leader's session can do that)", func() bool {
		return countKind(readEvents(t, events), "start") == 2
	})
	t.Logf("failover after SIGKILL of the leading run: %s (session timeout %s)", time.Since(start), watchdogSessionTimeout)
	if processAlive(childPID) {
		t.Fatalf("the killed leader's child %d still runs beside the new leader's", childPID)
	}
	if second := readEvents(t, events)[1]; second.id() == "p1" {
		t.Fatalf("the new child runs under the killed p1")
	}
}

// TestRunPausedLeaderIsNotTakenForDead: `run` SIGSTOPped past its session
// timeout is alive: its watchdog leaves it alone. The session expires on
// its own (a successor leads after the timeout), and the paused leader's
// child, which only a watchdog that took the pause for death would kill,
// is still running until the resumed run stops it.
func TestRunPausedLeaderIsNotTakenForDead(t *testing.T) {
	s := testSession(t)
	election, events := testPath(t), filepath.Join(t.TempDir(), "events")
	procs := startThree(t, s, election, events, zkc.ConnectString())
	childPID, _ := strconv.Atoi(readEvents(t, events)[0].fields[4])

	start := time.Now()
	procs["p1"].signal(syscall.SIGSTOP)
	eventually(t, procSessionTimeout+10*time.Second, "a child to start elsewhere once the paused leader's session expired", func() bool {
		return countKind(readEvents(t, events), "start") == 2
	})
	if took := time.Since(start); took < procSessionTimeout/2 {
		t.Fatalf("a successor led %s after the pause, before the session could expire: the paused leader was taken for dead", took)
	}
	if !processAlive(childPID) {
		t.Fatalf("the paused leader's child %d was killed: its watchdog took the pause for death", childPID)
	}
	procs["p1"].signal(syscall.SIGCONT)
	eventually(t, 10*time.Second, "the resumed leader to stop its child", func() bool { return !processAlive(childPID) })
}

// TestShardsKilledDaemonFailsOverBeforeSessionTimeout: a shards daemon
// killed with SIGKILL: its watchdog closes its session, so the other
// member leads every shard well before the session could have expired.
func TestShardsKilledDaemonFailsOverBeforeSessionTimeout(t *testing.T) {
	const n = 6
	s := testSession(t)
	root := testPath(t)
	long := []string{"--session-timeout", watchdogSessionTimeout.String()}
	ds := map[string]*daemon{}
	for _, m := range []string{"m1", "m2"} {
		ds[m] = startDaemonWith(t, root, m, n, long)
	}
	eventually(t, 30*time.Second, "6 shards balanced over m1 and m2", func() bool {
		return balanced(owners(t, s, root), n, "m1", "m2")
	})
	start := time.Now()
	ds["m2"].signal(syscall.SIGKILL)
	eventually(t, watchdogSessionTimeout/2, "m1 to lead every shard within half the session timeout (only a watchdog closing m2's session can do that)", func() bool {
		return leadCounts(owners(t, s, root))["m1"] == n
	})
	t.Logf("shards failover after SIGKILL of a daemon: %s (session timeout %s)", time.Since(start), watchdogSessionTimeout)
}
