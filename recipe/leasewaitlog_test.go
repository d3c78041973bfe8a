package recipe_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/recipe"
)

// TestALongWaitForTheLeaseIsLogged keeps the server's replies lagging past
// the local lease while the connection stays up, for several session
// timeouts: the candidate, first in its election, may not lead and waits
// for the lease. That wait must be told at warning level (issue 32: shards
// of a cold start on a loaded machine stayed unled for minutes with
// nothing logged, their candidates waiting for the lease with a debug line
// each), and its end once replies are prompt again and the candidate leads.
func TestALongWaitForTheLeaseIsLogged(t *testing.T) {
	whileConnected(t, longLeaseWaitLogged)
}

// longLeaseWaitLogged runs the scenario once and reports whether the
// connection stayed up throughout.
func longLeaseWaitLogged(t *testing.T) bool {
	p := zkc.NewProxyT(t)
	var logs syncBuffer
	s := session(t, p.ConnectString(), recipe.WithLogger(zerolog.New(&logs).Level(zerolog.InfoLevel)))
	c := candidate(t, s, electionPath(t))
	lagPastTheLease(t, p, s.Timeout(), lead(t, c))
	const warning = "elections first in line cannot lead"
	deadline := time.Now().Add(wait)
	for !strings.Contains(logs.String(), warning) {
		if strings.Contains(logs.String(), "session disconnected") {
			p.SetLatency(0)
			return false
		}
		if time.Now().After(deadline) {
			t.Fatalf("no warning %q within %v of the lease running out (it must come a session timeout after); logs:\n%s", warning, wait, logs.String())
		}
		time.Sleep(10 * time.Millisecond) // polling a log buffer
	}
	p.SetLatency(0)
	again := lead(t, c)
	if strings.Contains(logs.String(), "session disconnected") {
		return false
	}
	if !strings.Contains(logs.String(), `"elections":1`) {
		t.Errorf("the warning does not count the one election waiting; logs:\n%s", logs.String())
	}
	waitForLog(t, &logs, "no election waits for the session's lease any more")
	if err := again.Resign(t.Context()); err != nil {
		t.Fatal(err)
	}
	return true
}

// waitForLog waits until logs contain line.
func waitForLog(t *testing.T, logs *syncBuffer, line string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !strings.Contains(logs.String(), line) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line %q within %v; logs:\n%s", line, wait, logs.String())
		}
		time.Sleep(10 * time.Millisecond) // polling a log buffer
	}
}
