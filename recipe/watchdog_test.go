package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/recipe/watchdog"
	"github.com/zkelect/zkelect/testenv"
)

// envWatchedLeader makes the test binary a leader process with a watchdog:
// "<servers>|<election path>".
const envWatchedLeader = "RECIPE_TEST_WATCHED_LEADER"

// watchedSessionTimeout is the leader process's session: the server's
// longest (20 ticks of 100 ms).
const watchedSessionTimeout = 2 * time.Second

// watchedLeader connects, starts its watchdog (this test binary, whose
// TestMain serves it), hands the session over, leads the election, prints
// LEADING and waits to be killed.
func watchedLeader(spec string) int {
	servers, path, _ := strings.Cut(spec, "|")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := recipe.Connect(ctx, strings.Split(servers, ","), recipe.WithSessionTimeout(watchedSessionTimeout))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	wd, err := watchdog.Start()
	if err == nil {
		err = wd.Watch(sess)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cand, err := recipe.NewCandidate(sess, path, recipe.WithParticipantID("watched"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := cand.Campaign(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("LEADING")
	select {} // until killed
}

// TestWatchdogEndsKilledLeadersSession: a leader process with a Watchdog
// is killed with SIGKILL; the watchdog closes its session, so the standby
// here leads well before the session could have expired.
func TestWatchdogEndsKilledLeadersSession(t *testing.T) {
	path := electionPath(t)
	leader := testenv.StartProcess(t, os.Args[0], nil, []string{envWatchedLeader + "=" + zkc.ConnectString() + "|" + path})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := leader.WaitLine(ctx, func(l string) bool { return l == "LEADING" }); err != nil {
		t.Fatalf("leader process: %v", err)
	}
	standby := campaign(t, session(t, zkc.ConnectString()), path, "standby")
	eventually(t, "the standby to queue behind the leader", func() bool {
		ps, err := recipe.Participants(t.Context(), session(t, zkc.ConnectString()), path)
		return err == nil && len(ps) == 2
	})
	killed := time.Now()
	if err := leader.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	limit := time.NewTimer(watchedSessionTimeout / 2)
	defer limit.Stop()
	select {
	case <-standby.won:
		t.Logf("standby led %s after the kill (session timeout %s)", time.Since(killed), watchedSessionTimeout)
	case <-limit.C:
		t.Fatalf("standby not leading %s after the leader's kill: its watchdog did not end its session (it expires after %s)",
			watchedSessionTimeout/2, watchedSessionTimeout)
	}
}

// TestWatchdogRefusesASessionItWouldCloseInClear: a session through a
// custom dialer (as one over TLS) is not handed over: the watchdog would
// close it over plain TCP, its password in clear.
func TestWatchdogRefusesASessionItWouldCloseInClear(t *testing.T) {
	wd, err := watchdog.Start()
	if errors.Is(err, watchdog.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Close()
	s := session(t, zkc.ConnectString(), recipe.WithDialer(net.DialTimeout))
	if err := wd.Watch(s); !errors.Is(err, watchdog.ErrTransport) {
		t.Fatalf("Watch of a session through a custom dialer = %v; want watchdog.ErrTransport", err)
	}
	if err := wd.Watch(session(t, zkc.ConnectString())); err != nil {
		t.Fatalf("Watch of a plain TCP session = %v", err)
	}
	if err := wd.Watch(nil); !errors.Is(err, recipe.ErrNilSession) {
		t.Fatalf("Watch(nil) = %v; want recipe.ErrNilSession", err)
	}
}
