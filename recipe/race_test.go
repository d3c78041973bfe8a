package recipe_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zkelect/zkelect/recipe"
)

// TestPredecessorGoneBeforeItsWatchIsSet delays the server's replies to a
// candidate so that its predecessor leaves after the candidate read the
// children but before it set the watch: the read of the predecessor fails
// (counted as a get_data error), and the candidate must re-read and wait
// behind the leader, neither stuck nor promoted.
func TestPredecessorGoneBeforeItsWatchIsSet(t *testing.T) {
	const delay = 400 * time.Millisecond
	for attempt := 1; ; attempt++ {
		if predecessorRace(t, delay) {
			return
		}
		if attempt == 3 {
			t.Fatal("the predecessor never left inside the window (machine too slow?)")
		}
		t.Logf("attempt %d missed the window; again", attempt)
	}
}

// predecessorRace runs the scenario once and reports whether the
// candidate's read of its vanished predecessor actually failed.
func predecessorRace(t *testing.T, delay time.Duration) bool {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	direct := session(t, zkc.ConnectString())
	first := lead(t, candidate(t, direct, path))
	second := candidate(t, direct, path)
	campaignAsync(context.Background(), second)
	eventually(t, "the second znode", func() bool { return len(children(t, raw, path)) == 2 })

	p := zkc.NewProxyT(t)
	reg := prometheus.NewRegistry()
	s := session(t, p.ConnectString(), recipe.WithMetrics(reg))
	third := candidate(t, s, path)
	p.SetLatency(delay)
	res := campaignAsync(context.Background(), third)
	eventually(t, "the third znode", func() bool { return len(children(t, raw, path)) == 3 })
	// The children are listed right behind the create, and both replies are
	// on their way (delay): leave in the middle, after the server listed but
	// before the candidate could ask for its predecessor.
	time.Sleep(delay / 2) // fault timing, not synchronisation
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	notYet(t, res, 3*delay, "the third candidate led beside the first")
	p.Heal()
	hit := metricValue(t, reg, "zkelect_zookeeper_request_duration_seconds", map[string]string{"op": "get_data", "result": "error"}) >= 1

	if err := first.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := awaitResult(t, res, "the third candidate to lead after the first left"); r.err != nil {
		t.Fatal(r.err)
	}
	return hit
}
