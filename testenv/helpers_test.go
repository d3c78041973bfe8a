package testenv_test

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// quiet discards go-zookeeper's log lines.
type quiet struct{}

func (quiet) Printf(string, ...any) {}

// client is a go-zookeeper connection that records its session states.
// go-zookeeper drops events when its channel is full, so states are taken
// from the event callback instead.
type client struct {
	*zk.Conn

	mu      sync.Mutex
	states  []zk.State
	changed chan struct{} // closed and replaced on every new state
	cursor  int           // next state waitState examines
}

// connect opens a session through connectString and waits until it is
// established. The connection is closed in t.Cleanup.
func connect(t *testing.T, connectString string, timeout time.Duration) *client {
	t.Helper()
	return connectVia(t, connectString, timeout, net.DialTimeout)
}

// connectVia is connect with the given dialer.
func connectVia(t *testing.T, connectString string, timeout time.Duration, dialer zk.Dialer) *client {
	t.Helper()
	c := &client{changed: make(chan struct{})}
	conn, _, err := zk.Connect(strings.Split(connectString, ","), timeout,
		zk.WithLogger(quiet{}), zk.WithEventCallback(c.record), zk.WithDialer(dialer))
	if err != nil {
		t.Fatalf("connect to %s: %v", connectString, err)
	}
	t.Cleanup(conn.Close)
	c.Conn = conn
	c.waitState(t, zk.StateHasSession)
	return c
}

func (c *client) record(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.states = append(c.states, ev.State)
	close(c.changed)
	c.changed = make(chan struct{})
}

// waitState waits for the next session state want, after the one the
// previous call returned.
func (c *client) waitState(t *testing.T, want zk.State) {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		c.mu.Lock()
		for ; c.cursor < len(c.states); c.cursor++ {
			if c.states[c.cursor] == want {
				c.cursor++
				c.mu.Unlock()
				return
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("no %v session state within %v", want, waitTimeout)
		}
	}
}

// waitDeleted waits until path is deleted, as seen by c.
func (c *client) waitDeleted(t *testing.T, path string) {
	t.Helper()
	ok, _, watch, err := c.ExistsW(path)
	if err != nil {
		t.Fatalf("exists %s: %v", path, err)
	}
	if !ok {
		return
	}
	select {
	case ev := <-watch:
		if ev.Type != zk.EventNodeDeleted {
			t.Fatalf("watch on %s fired with %v, want node deleted", path, ev.Type)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("%s not deleted within %v", path, waitTimeout)
	}
}

// mustCreate creates path with the given flags.
func (c *client) mustCreate(t *testing.T, path string, flags int32) {
	t.Helper()
	if _, err := c.Create(path, []byte("x"), flags, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
}
