package recipe_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestLeadsAgainWhenTheLeaseHoldsAgain slows the server's replies past the
// local lease while the connection stays up (an overloaded server or
// connection): the leadership ends with ErrSuspended though no session
// event comes. Once replies are prompt again, the candidate, whose znode
// never stopped being first, must lead again, on the same znode with the
// same token. Found in a 10,000-shard cold start with 1,024 elections in
// flight: nothing restarted the election, and the shard stayed leaderless
// behind its own first znode.
func TestLeadsAgainWhenTheLeaseHoldsAgain(t *testing.T) {
	whileConnected(t, leaseOutWhileConnected)
}

// whileConnected runs scenario until one run reports that the connection
// stayed up throughout, at most three times: a reconnect restarts the
// election, so a run in which the connection dropped proves nothing.
func whileConnected(t *testing.T, scenario func(*testing.T) bool) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		if scenario(t) {
			return
		}
		if attempt == 3 {
			t.Fatal("the connection dropped in every attempt (machine too slow?): a reconnect restarts the election, so nothing was proved")
		}
		t.Logf("attempt %d: the connection dropped after all; again", attempt)
	}
}

// lagPastTheLease raises p's reply latency past the lease of a session of
// timeout to, and waits for first to end with ErrSuspended. The lease
// runs out when replies lag by over 3/4 of the timeout; the lag rises in
// steps small enough that replies (pings every third of the timeout)
// never pause for go-zookeeper's read timeout (2/3 of it).
func lagPastTheLease(t *testing.T, p *testenv.Proxy, to time.Duration, first *recipe.Leadership) {
	t.Helper()
	for _, f := range []float64{0.15, 0.3, 0.45, 0.6, 0.75, 0.9} {
		p.SetLatency(time.Duration(f * float64(to)))
		time.Sleep(to / 4) // fault pacing, not synchronisation
	}
	if err := awaitEnd(t, first, "the leadership to end once the lease ran out"); !errors.Is(err, recipe.ErrSuspended) {
		t.Fatalf("leadership ended with %v, want ErrSuspended", err)
	}
}

// leaseOutWhileConnected runs the scenario once and reports whether the
// connection stayed up throughout (else the reconnect, not the lease wait,
// may have restarted the election).
func leaseOutWhileConnected(t *testing.T) bool {
	p := zkc.NewProxyT(t)
	var logs syncBuffer
	s := session(t, p.ConnectString(), recipe.WithLogger(zerolog.New(&logs)))
	c := candidate(t, s, electionPath(t))
	first := lead(t, c)
	lagPastTheLease(t, p, s.Timeout(), first)
	p.SetLatency(0)
	again := lead(t, c)
	if strings.Contains(logs.String(), "session disconnected") {
		return false
	}
	if again.Znode() != first.Znode() || again.Token() != first.Token() {
		t.Fatalf("led again on %s (token %v), want the same znode %s (token %v)", again.Znode(), again.Token(), first.Znode(), first.Token())
	}
	if err := again.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	return true
}

// syncBuffer is a bytes.Buffer safe for concurrent writes (a log sink).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
