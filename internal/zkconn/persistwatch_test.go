package zkconn

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
)

// Contract tests of addWatch against the real server (ZooKeeper 3.8): one
// recursive watch reports every creation, data change and deletion under
// its path, keeps doing so after firing, lives beside a one-shot watch on
// a path under it, and leaves the server with its last user.

func TestRecursiveWatchReportsEveryChangeUnderItsPathUntilRemoved(t *testing.T) {
	runWatchScenario(t, 0, func(ctx context.Context, c *Conn, k *eventSink, dir string) error {
		c.RoutePersistent(dir, true, k)
		if err := c.AddWatch(ctx, dir, true); err != nil {
			return err
		}
		if err := expectWatches(ctx, c, dir); err != nil {
			return err
		}
		acl := zk.WorldACL(zk.PermAll)
		a, b := dir+"/a", dir+"/a/b"
		steps := []struct {
			do   func() error
			typ  zk.EventType
			path string
		}{
			{func() error { _, err := c.Create(ctx, a, nil, 0, acl); return err }, zk.EventNodeCreated, a},
			{func() error { _, err := c.Create(ctx, b, nil, zk.FlagEphemeral, acl); return err }, zk.EventNodeCreated, b},
			{func() error { _, err := c.Set(ctx, b, []byte("x"), -1); return err }, zk.EventNodeDataChanged, b},
			{func() error { return c.Delete(ctx, b, -1) }, zk.EventNodeDeleted, b},
			{func() error { _, err := c.Create(ctx, b, nil, 0, acl); return err }, zk.EventNodeCreated, b}, // fired before: still set
		}
		for i, s := range steps {
			if err := s.do(); err != nil {
				return fmt.Errorf("step %d: %w", i, err)
			}
			if err := awaitNode(ctx, k.nodes, s.typ, s.path, fmt.Sprintf("step %d's recursive watch", i)); err != nil {
				return err
			}
		}
		c.RemovePersistent(dir, true, k)
		if err := expectWatches(ctx, c); err != nil {
			return fmt.Errorf("after RemovePersistent: %w", err)
		}
		if err := c.Delete(ctx, b, -1); err != nil {
			return err
		}
		if _, err := c.Sync(ctx, "/"); err != nil {
			return err
		}
		select {
		case ev := <-k.nodes:
			return fmt.Errorf("event %v on %s after the watch was removed", ev.Type, ev.Path)
		default:
		}
		return persistentEmpty(c)
	})
}

func TestRecursiveWatchAndOneShotUnderItBothFire(t *testing.T) {
	runWatchScenario(t, 0, func(ctx context.Context, c *Conn, k *eventSink, dir string) error {
		p := dir + "/n"
		if _, err := c.Create(ctx, p, []byte("v1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			return err
		}
		c.RoutePersistent(dir, true, k)
		if err := c.AddWatch(ctx, dir, true); err != nil {
			return err
		}
		_, _, shot, err := c.GetW(ctx, p)
		if err != nil {
			return err
		}
		if _, err := c.Set(ctx, p, []byte("v2"), -1); err != nil {
			return err
		}
		if err := awaitNode(ctx, shot, zk.EventNodeDataChanged, p, "the one-shot GetW"); err != nil {
			return err
		}
		if err := awaitNode(ctx, k.nodes, zk.EventNodeDataChanged, p, "the recursive watch"); err != nil {
			return err
		}
		if err := expectWatches(ctx, c, dir); err != nil { // the shot's watch fired, the persistent stays
			return err
		}
		c.RemovePersistent(dir, true, k)
		if err := expectWatches(ctx, c); err != nil {
			return err
		}
		if err := tableEmpty(c); err != nil {
			return err
		}
		return persistentEmpty(c)
	})
}

func TestPersistentWatchIsForgottenWithTheConnectionAndAddedAgain(t *testing.T) {
	runWatchScenario(t, 1, func(ctx context.Context, c *Conn, k *eventSink, dir string) error {
		c.RoutePersistent(dir, true, k)
		if err := c.AddWatch(ctx, dir, true); err != nil {
			return err
		}
		if err := expectWatches(ctx, c, dir); err != nil {
			return err
		}
		c.wire.closeCurrent() // the connection drops; the session lives
		if err := k.awaitSession(ctx, Connected); err != nil {
			return err
		}
		if err := expectWatches(ctx, c); err != nil {
			return fmt.Errorf("on the new connection before the watch is added again: %w", err)
		}
		c.mu.Lock()
		armed := len(c.watches.persistent.armed)
		c.mu.Unlock()
		if armed != 0 {
			return fmt.Errorf("after the reconnect the table still records %d persistent watches", armed)
		}
		if err := c.AddWatch(ctx, dir, true); err != nil {
			return err
		}
		if _, err := c.Create(ctx, dir+"/after", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			return err
		}
		if err := awaitNode(ctx, k.nodes, zk.EventNodeCreated, dir+"/after", "the watch added again"); err != nil {
			return err
		}
		c.RemovePersistent(dir, true, k)
		if err := expectWatches(ctx, c); err != nil {
			return err
		}
		return persistentEmpty(c)
	})
}

// persistentEmpty reports persistent routes or watches left behind.
func persistentEmpty(c *Conn) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.watches.persistent; len(t.routes)+len(t.armed) != 0 {
		return fmt.Errorf("persistent table still holds routes %v, watches %v", t.routes, t.armed)
	}
	return nil
}
