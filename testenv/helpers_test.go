package testenv_test

import (
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// quiet discards go-zookeeper's log lines.
type quiet struct{}

func (quiet) Printf(string, ...any) {}

// client is a go-zookeeper connection and its event stream.
type client struct {
	*zk.Conn
	events <-chan zk.Event
}

// connect opens a session through connectString and waits until it is
// established. The connection is closed in t.Cleanup.
func connect(t *testing.T, connectString string, timeout time.Duration) *client {
	t.Helper()
	conn, events, err := zk.Connect(strings.Split(connectString, ","), timeout, zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatalf("connect to %s: %v", connectString, err)
	}
	t.Cleanup(conn.Close)
	c := &client{Conn: conn, events: events}
	c.waitState(t, zk.StateHasSession)
	return c
}

// waitState waits for a session event with the given state.
func (c *client) waitState(t *testing.T, want zk.State) {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		select {
		case ev := <-c.events:
			if ev.Type == zk.EventSession && ev.State == want {
				return
			}
		case <-timer.C:
			t.Fatalf("no %v session event within %v", want, waitTimeout)
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
