package zkconn

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/testenv"
)

// TestExpiredSessionIsReplacedWithoutAPause expires a session on the
// live server: the connection drops, the server answers that the session
// expired, and a new session is granted, without go-zookeeper's
// one-second pause, which is for a round of servers that did not answer.
// Before, the host provider asked for it twice (before dialling the
// server again after the drop, and after the "expired" answer). The
// client's dials wait until the expiry is done: one at once could resume
// the session between testenv's resumption and its closeSession. It also
// checks that NextConnect, taken before the expiry, is closed by the new
// session, and that Close closes the next one.
func TestExpiredSessionIsReplacedWithoutAPause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dials := &answerCounter{}
	c, err := Dial(ctx, zkc.Addrs(), Config{Timeout: 4 * time.Second, ConnectTimeout: 30 * time.Second,
		Log: zerolog.Nop(), Dialer: dials.dial})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := newEventSink()
	c.Subscribe(k)
	id, password := c.Credentials()
	before, unansweredBefore := c.hosts.pausesAsked(), dials.unanswered()
	next := c.NextConnect()
	release := dials.hold()
	err = testenv.ExpireSession(ctx, zkc.Addrs(), id, password)
	release()
	if err != nil {
		t.Fatal(err)
	}
	if err := k.awaitSession(ctx, Expired); err != nil {
		t.Fatal(err)
	}
	if err := k.awaitSession(ctx, Connected); err != nil {
		t.Fatalf("awaiting the new session: %v", err)
	}
	pauses, unanswered := c.hosts.pausesAsked()-before, dials.unanswered()-unansweredBefore
	t.Logf("between the expiry and the new session: %d pauses, %d dials answered, %d not", pauses, dials.answered(), unanswered)
	if pauses != 0 || unanswered != 0 {
		t.Fatalf("the host provider asked go-zookeeper for %d one-second pauses between the expiry and the new session, "+
			"with %d dials unanswered; want no pause, every dial answered", pauses, unanswered)
	}
	if got := c.ID(); got == id || got == 0 {
		t.Fatalf("session after the expiry: %x, want a new one (old %x)", got, id)
	}
	select {
	case <-next:
	default:
		t.Fatal("NextConnect taken before the expiry is still open after the new session")
	}
	after := c.NextConnect()
	select {
	case <-after:
		t.Fatal("NextConnect taken after the new session is closed already")
	default:
	}
	_ = c.Close()
	select {
	case <-after:
	default:
		t.Fatal("NextConnect still open after Close")
	}
}

// answerCounter is a Dialer that counts the connections a server
// answered (sent a byte on) and those it did not (failed dials included),
// and holds dials while asked to.
type answerCounter struct {
	mu    sync.Mutex
	conns []*answerConn
	fails int
	held  chan struct{} // dials wait until it is closed; nil: none held
}

// hold makes dials wait until release is called.
func (a *answerCounter) hold() (release func()) {
	ch := make(chan struct{})
	a.mu.Lock()
	a.held = ch
	a.mu.Unlock()
	return func() { close(ch) }
}

func (a *answerCounter) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	a.mu.Lock()
	held := a.held
	a.mu.Unlock()
	if held != nil {
		<-held // released right after ExpireSession returns
	}
	c, err := net.DialTimeout(network, addr, timeout)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.fails++
		return nil, err
	}
	ac := &answerConn{Conn: c}
	a.conns = append(a.conns, ac)
	return ac, nil
}

func (a *answerCounter) answered() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.conns {
		if c.read.Load() {
			n++
		}
	}
	return n
}

func (a *answerCounter) unanswered() int {
	a.mu.Lock()
	n := len(a.conns) + a.fails
	a.mu.Unlock()
	return n - a.answered()
}

type answerConn struct {
	net.Conn
	read atomic.Bool
}

func (c *answerConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.read.Store(true)
	}
	return n, err
}
