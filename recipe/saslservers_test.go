package recipe_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// TestSASLOverASlowLinkConnects: over a 400 ms round trip with a 2 s
// session the SASL exchange (two round trips after the connect response)
// needs longer than the bound learnt from the connect response; its own
// bound grows until it fits, and the session connects.
func TestSASLOverASlowLinkConnects(t *testing.T) {
	zks := testenv.New(t, testenv.Options{SASLUsers: saslUsers})
	p := zks.NewProxyT(t)
	p.SetLatency(400 * time.Millisecond)
	start := time.Now()
	s := session(t, p.ConnectString(), recipe.WithSASL("group", saslUsers["group"]),
		recipe.WithSessionTimeout(2*time.Second), recipe.WithConnectTimeout(wait))
	t.Logf("connected with SASL over a 400 ms round trip after %v (session %x)", time.Since(start).Round(time.Millisecond), s.ID())
}

// TestSASLRefusedByOneServerLivesOnTheOthers: one server of three,
// restarted with another password for the session's user, refuses its
// login; the session moves to the other two and lives on, through
// reconnects that try the refusing server again.
func TestSASLRefusedByOneServerLivesOnTheOthers(t *testing.T) {
	zks := testenv.New(t, testenv.Options{Servers: 3, SASLUsers: saslUsers})
	if err := zks.SetSASLUsers(map[string]string{"group": "rotated", "other": saslUsers["other"]}); err != nil {
		t.Fatal(err)
	}
	if err := zks.Restart(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if err := zks.SetSASLUsers(saslUsers); err != nil { // servers started later accept the old password
		t.Fatal(err)
	}
	p := zks.NewProxyT(t)
	s := session(t, p.ConnectString(), recipe.WithSASL("group", saslUsers["group"]), recipe.WithSessionTimeout(4*time.Second))
	c := candidate(t, s, electionPath(t))
	lead(t, c)
	id := s.ID()
	for i := range 6 { // go-zookeeper tries the servers in turn: the refusing one at least twice
		reconnect(t, p, s)
		if s.ID() != id {
			t.Fatalf("cut %d: session %x replaced by %x", i+1, id, s.ID())
		}
	}
	select {
	case <-s.Ended():
		t.Fatalf("session ended: %v", s.EndErr())
	default:
	}
	lead(t, c)
}

// TestSASLRefusedEverywhereRunReturnsErrAuthFailed: once every server
// refuses the session's credentials (rotated on the ensemble), Run does
// not wait for a session that cannot come: it returns ErrAuthFailed.
func TestSASLRefusedEverywhereRunReturnsErrAuthFailed(t *testing.T) {
	const connectTimeout = 5 * time.Second
	zks := testenv.New(t, testenv.Options{SASLUsers: saslUsers})
	s := session(t, zks.ConnectString(), recipe.WithSASL("group", saslUsers["group"]),
		recipe.WithSessionTimeout(2*time.Second), recipe.WithConnectTimeout(connectTimeout))
	c := candidate(t, s, electionPath(t))
	led := make(chan struct{}, 1)
	ran := make(chan error, 1)
	go func() {
		ran <- recipe.Run(context.Background(), c, func(ctx context.Context, _ zxidfence.Token) error {
			led <- struct{}{}
			<-ctx.Done()
			return nil
		})
	}()
	select {
	case <-led:
	case <-time.After(wait):
		t.Fatal("Run did not lead")
	}
	if err := zks.RestartWithSASLUsers(t.Context(), 0, map[string]string{"group": "rotated"}); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	select {
	case err := <-ran:
		if !errors.Is(err, recipe.ErrAuthFailed) {
			t.Fatalf("Run: %v, want ErrAuthFailed", err)
		}
		t.Logf("Run returned %v after the server came back refusing: %v", time.Since(restarted).Round(time.Millisecond), err)
	case <-time.After(wait):
		t.Fatalf("Run still running %v after every server refused the credentials", wait)
	}
	if _, err := c.Campaign(context.Background()); !errors.Is(err, recipe.ErrAuthFailed) {
		t.Fatalf("Campaign after the refusal: %v, want ErrAuthFailed", err)
	}
}
