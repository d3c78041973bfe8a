package zkconn

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/testenv"
)

// TestExpiredSessionIsReplacedWithoutAPause expires a session on the
// live server: the connection drops, the server answers that the session
// expired, and a new session is granted, all without go-zookeeper's
// one-second pause (which is for a round of servers that did not answer).
// Before, the host provider asked for it twice: once before dialling the
// server again after the drop, once after the "expired" answer.
func TestExpiredSessionIsReplacedWithoutAPause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, zkc.Addrs(), Config{Timeout: 4 * time.Second, ConnectTimeout: 30 * time.Second, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := newEventSink()
	c.Subscribe(k)
	id, password := c.Credentials()
	before := c.hosts.pausesAsked()
	if err := testenv.ExpireSession(ctx, zkc.Addrs(), id, password); err != nil {
		t.Fatal(err)
	}
	if err := k.awaitSession(ctx, Expired); err != nil {
		t.Fatal(err)
	}
	if err := k.awaitSession(ctx, Connected); err != nil {
		t.Fatalf("awaiting the new session: %v", err)
	}
	if n := c.hosts.pausesAsked() - before; n != 0 {
		t.Fatalf("the host provider asked go-zookeeper for %d one-second pauses between the expiry and the new session, want 0", n)
	}
	if got := c.ID(); got == id || got == 0 {
		t.Fatalf("session after the expiry: %x, want a new one (old %x)", got, id)
	}
}
