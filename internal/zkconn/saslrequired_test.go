package zkconn

import (
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/testenv"
)

// TestLoginRequiredEndsSession: a server that requires a SASL login
// (sessionRequireClientSASLAuth) answers the first request of a session
// without one with SESSIONCLOSEDREQUIRESASLAUTH (-124) and closes the
// connection. When that request is the layer's own read of
// /zookeeper/config (reconfig.go), the only one sent on a session no
// caller uses, the session ends all the same: Ended is closed, EndErr and
// a later call return an *AuthError (ErrAuthFailed) wrapping a *CodeError
// of code -124 naming that read (getData), classified session over, and
// no connection is made after it. A caller's call racing that read fails with the same cause,
// whichever of the two took the answer.
func TestLoginRequiredEndsSession(t *testing.T) {
	zks := testenv.New(t, testenv.Options{Servers: 1, SASLUsers: map[string]string{"u": "secret"}, SASLRequired: true})
	var dials atomic.Int32
	c := dialT(t, zks.Addrs(), Config{Timeout: 10 * time.Second, Log: zerolog.Nop(),
		Dialer: func(network, addr string, timeout time.Duration) (net.Conn, error) {
			dials.Add(1)
			return net.DialTimeout(network, addr, timeout)
		}})
	select {
	case <-c.Ended():
	case <-time.After(30 * time.Second):
		t.Fatalf("the session did not end within 30s of its first request (the layer's), after %d connections", dials.Load())
	}
	checkLoginRequired(t, "EndErr", c.EndErr())
	if ce := (*CodeError)(nil); errors.As(c.EndErr(), &ce) && ce.Op != "getData" {
		t.Errorf("EndErr names %s as the request answered -124; want getData, the layer's read of %s", ce.Op, configPath)
	}
	_, _, err := c.Children(t.Context(), "/")
	checkLoginRequired(t, "a call after the end", err)
	n := dials.Load()
	select {
	case <-time.After(3 * time.Second): // go-zookeeper tries a round of servers every second
	case <-t.Context().Done():
	}
	if got := dials.Load(); got != n {
		t.Errorf("%d connections made after the -124 answer; want none", got-n)
	}

	racing := dialT(t, zks.Addrs(), Config{Timeout: 10 * time.Second, Log: zerolog.Nop()})
	_, _, err = racing.Children(t.Context(), "/")
	checkLoginRequired(t, "a call racing the layer's first request", err)
}

// checkLoginRequired fails t unless err is the end cause of a session a
// server refused for want of a SASL login.
func checkLoginRequired(t *testing.T, what string, err error) {
	t.Helper()
	var ae *AuthError
	var ce *CodeError
	if !errors.As(err, &ae) || !errors.As(err, &ce) || ce.Code != jute.CodeSessionClosedRequireSASL ||
		!errors.Is(err, ErrAuthFailed) || Classify(err) != jute.ClassSessionOver {
		t.Fatalf("%s: %v (%T); want an *AuthError wrapping a *CodeError of SESSIONCLOSEDREQUIRESASLAUTH (-124), session over", what, err, err)
	}
}
