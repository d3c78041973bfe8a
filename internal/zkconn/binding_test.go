package zkconn

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/testenv"
)

// TestCallWaitingThroughAnExpiryFailsAtOnce: a call made while the
// session is disconnected waits for a connection; when the session
// expires meanwhile, the call cannot succeed in it, so it fails with
// zk.ErrSessionExpired as soon as the expiry is known, instead of waiting
// out its bound or going out on the new session.
func TestCallWaitingThroughAnExpiryFailsAtOnce(t *testing.T) {
	p := zkc.NewProxyT(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, p.Addrs(), Config{Timeout: 4 * time.Second, ConnectTimeout: 30 * time.Second, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := newEventSink()
	c.Subscribe(k)
	id, password := c.Credentials()
	p.Blackhole()
	if err := k.awaitSession(ctx, Disconnected); err != nil {
		t.Fatal(err)
	}
	type result struct {
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		_, _, err := c.Get(ctx, "/")
		done <- result{err, time.Now()}
	}()
	if err := testenv.ExpireSession(ctx, zkc.Addrs(), id, password); err != nil {
		t.Fatal(err)
	}
	p.Heal()
	if err := k.awaitSession(ctx, Expired); err != nil {
		t.Fatal(err)
	}
	expired := time.Now()
	select {
	case r := <-done:
		if !errors.Is(r.err, zk.ErrSessionExpired) {
			t.Fatalf("call made in session %x, which expired meanwhile: %v, want zk.ErrSessionExpired", id, r.err)
		}
		t.Logf("failed %v after the expiry was known: %v", r.at.Sub(expired), r.err)
	case <-time.After(time.Minute):
		t.Fatal("the call did not return within a minute of the expiry")
	}
}
