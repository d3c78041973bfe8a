package zkconn

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/retry"
)

// Tests of the one watch table against a real server: the server's own
// list of the session's watches (wchc) says what the session holds.

// eventSink records what a Conn routes to it; it never blocks.
type eventSink struct {
	nodes chan zk.Event
	sess  chan Event
	drops atomic.Int32 // Disconnected and Expired events seen
}

func newEventSink() *eventSink {
	return &eventSink{nodes: make(chan zk.Event, 64), sess: make(chan Event, 64)}
}

func (k *eventSink) SessionChanged(ev Event) {
	if ev.Kind == Disconnected || ev.Kind == Expired {
		k.drops.Add(1)
	}
	select {
	case k.sess <- ev:
	default:
	}
}

func (k *eventSink) NodeChanged(ev zk.Event) {
	select {
	case k.nodes <- ev:
	default:
	}
}

// awaitSession waits for a session event of kind.
func (k *eventSink) awaitSession(ctx context.Context, kind EventKind) error {
	for {
		select {
		case ev := <-k.sess:
			if ev.Kind == kind {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("no session event %d: %w", kind, ctx.Err())
		}
	}
}

// watchScenario is one run of a test on fresh znodes under dir, with a
// Conn c whose sink k is subscribed. It fails with what it awaited.
type watchScenario func(ctx context.Context, c *Conn, k *eventSink, dir string) error

// runWatchScenario runs sc against the shared server, again (up to three
// runs) when the connection dropped unplanned during a run: the server
// drops a connection's watches with it, so such a run proves nothing.
// planned is how many drops the scenario causes itself.
func runWatchScenario(t *testing.T, planned int32, sc watchScenario) {
	t.Helper()
	var err error
	for run := range 3 {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		c, dialErr := Dial(ctx, zkc.Addrs(), Config{Timeout: 10 * time.Second, ConnectTimeout: 30 * time.Second, Log: zerolog.Nop()})
		if dialErr != nil {
			cancel()
			t.Fatalf("dial: %v", dialErr)
		}
		k := newEventSink()
		c.Subscribe(k)
		var dir string // sequential: fresh for every run and -count
		dir, err = c.Create(ctx, "/watchtable-"+strings.ReplaceAll(t.Name(), "/", "-")+"-", nil, zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err == nil {
			err = sc(ctx, c, k, dir)
		}
		drops := k.drops.Load()
		_ = c.Close()
		cancel()
		if err == nil {
			return
		}
		if drops == planned {
			break
		}
		t.Logf("run %d: the connection dropped unplanned (%d drops, %d planned): %v; again", run, drops, planned, err)
	}
	t.Fatal(err)
}

// serverWatches returns the data and exists watches the server holds for
// c's session, once every request c wrote before has been processed
// (ZooKeeper answers a session's requests in order).
func serverWatches(ctx context.Context, c *Conn) ([]string, error) {
	if _, err := c.Sync(ctx, "/"); err != nil {
		return nil, err
	}
	all, err := zkc.Wchc(ctx, 0)
	if err != nil {
		return nil, err
	}
	return all[c.ID()], nil
}

// expectWatches waits until the server holds exactly want (sorted) for c's
// session: a removal is written after the decision, a watch set by the
// reply to a read.
func expectWatches(ctx context.Context, c *Conn, want ...string) error {
	var got []string
	for {
		var err error
		if got, err = serverWatches(ctx, c); err == nil && slices.Equal(got, want) {
			return nil
		}
		if !retry.Sleep(ctx, 50*time.Millisecond) {
			return fmt.Errorf("server watches of the session: %v, want %v (%v)", got, want, err)
		}
	}
}

// heldKeys returns the watches the table records for the connection.
func heldKeys(c *Conn) []watchKey {
	c.mu.Lock()
	defer c.mu.Unlock()
	var keys []watchKey
	for k := range c.watches.armed {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b watchKey) int {
		return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
	})
	return keys
}

// shotCount returns how many one-shot watches the table holds.
func shotCount(c *Conn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, set := range c.watches.shots {
		n += len(set)
	}
	return n
}

// tableEmpty reports what the table still holds once every user left: no
// watch, shot or route may stay behind (each would be memory held for
// nothing, and a route would deliver events nobody reads).
func tableEmpty(c *Conn) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.watches
	if len(t.armed)+len(t.shots)+len(t.routes)+len(t.bySink) != 0 {
		return fmt.Errorf("the table still holds watches %v, shots %v, routes %v, sinks' paths %v", t.armed, t.shots, t.routes, t.bySink)
	}
	return nil
}

// awaitNode waits for an event of typ on path from ch.
func awaitNode(ctx context.Context, ch <-chan zk.Event, typ zk.EventType, path, who string) error {
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return fmt.Errorf("%s: channel closed before %v on %s", who, typ, path)
			}
			if ev.Type == typ && ev.Path == path {
				return nil
			}
			if ev.Type == zk.EventNotWatching {
				return fmt.Errorf("%s: watch lost (%v) before %v on %s", who, ev.Err, typ, path)
			}
		case <-ctx.Done():
			return fmt.Errorf("%s: no %v on %s: %w", who, typ, path, ctx.Err())
		}
	}
}

// watchBoth creates path and has c hold its data watch twice: routed to k
// (WatchData) and as a one-shot GetW bound to shotCtx.
func watchBoth(ctx, shotCtx context.Context, c *Conn, k *eventSink, path string) (<-chan zk.Event, error) {
	if _, err := c.Create(ctx, path, []byte("v1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		return nil, err
	}
	c.Route(path, k)
	if _, err := c.WatchData(ctx, path); err != nil {
		return nil, err
	}
	_, _, ch, err := c.GetW(shotCtx, path)
	return ch, err
}

func TestOneShotAndRoutedWatchShareOneServerWatchAndBothFire(t *testing.T) {
	runWatchScenario(t, 0, func(ctx context.Context, c *Conn, k *eventSink, dir string) error {
		p := dir + "/n"
		shot, err := watchBoth(ctx, ctx, c, k, p)
		if err != nil {
			return err
		}
		if held := heldKeys(c); !slices.Equal(held, []watchKey{{p, watchData}}) {
			return fmt.Errorf("table holds %v, want the one data watch of %s", held, p)
		}
		if err := expectWatches(ctx, c, p); err != nil {
			return err
		}
		if _, err := c.Set(ctx, p, []byte("v2"), -1); err != nil {
			return err
		}
		if err := awaitNode(ctx, shot, zk.EventNodeDataChanged, p, "the one-shot GetW"); err != nil {
			return err
		}
		if err := awaitNode(ctx, k.nodes, zk.EventNodeDataChanged, p, "the routed watch"); err != nil {
			return err
		}
		if held, shots := heldKeys(c), shotCount(c); len(held) != 0 || shots != 0 {
			return fmt.Errorf("after the event the table holds %v and %d shots, want nothing", held, shots)
		}
		return expectWatches(ctx, c)
	})
}

func TestWatchLeavesTheServerOnlyWithItsLastUser(t *testing.T) {
	t.Run("one-shot leaves first", func(t *testing.T) {
		runWatchScenario(t, 0, func(ctx context.Context, c *Conn, k *eventSink, dir string) error {
			p := dir + "/n"
			shotCtx, cancelShot := context.WithCancel(ctx)
			defer cancelShot()
			if _, err := watchBoth(ctx, shotCtx, c, k, p); err != nil {
				return err
			}
			cancelShot()
			if err := awaitShots(ctx, c, 0); err != nil {
				return err
			}
			if got, err := serverWatches(ctx, c); err != nil || !slices.Equal(got, []string{p}) {
				return fmt.Errorf("after the one-shot left, the routed user's watch: server holds %v (%v), want [%s]", got, err, p)
			}
			c.DropWatch(p, k)
			if err := expectWatches(ctx, c); err != nil {
				return err
			}
			return tableEmpty(c)
		})
	})
	t.Run("routed user leaves first", func(t *testing.T) {
		runWatchScenario(t, 0, func(ctx context.Context, c *Conn, k *eventSink, dir string) error {
			p := dir + "/n"
			shotCtx, cancelShot := context.WithCancel(ctx)
			defer cancelShot()
			shot, err := watchBoth(ctx, shotCtx, c, k, p)
			if err != nil {
				return err
			}
			c.DropWatch(p, k)
			if got, err := serverWatches(ctx, c); err != nil || !slices.Equal(got, []string{p}) {
				return fmt.Errorf("after DropWatch, the one-shot's watch: server holds %v (%v), want [%s]", got, err, p)
			}
			if _, err := c.Set(ctx, p, []byte("v2"), -1); err != nil {
				return err
			}
			if err := awaitNode(ctx, shot, zk.EventNodeDataChanged, p, "the one-shot GetW"); err != nil {
				return err
			}
			if err := expectWatches(ctx, c); err != nil {
				return err
			}
			return tableEmpty(c)
		})
	})
	t.Run("child watch leaves the data watch", func(t *testing.T) {
		runWatchScenario(t, 0, func(ctx context.Context, c *Conn, k *eventSink, dir string) error {
			p := dir + "/n"
			shotCtx, cancelShot := context.WithCancel(ctx)
			defer cancelShot()
			if _, err := watchBoth(ctx, ctx, c, k, p); err != nil {
				return err
			}
			if _, _, _, err := c.ChildrenW(shotCtx, p); err != nil {
				return err
			}
			cancelShot()
			if err := awaitShots(ctx, c, 1); err != nil {
				return err
			}
			if got, err := serverWatches(ctx, c); err != nil || !slices.Equal(got, []string{p}) {
				return fmt.Errorf("after the child watch left, the data watch: server holds %v (%v), want [%s]", got, err, p)
			}
			return nil
		})
	})
}

// awaitShots waits until the table holds n shots (a cancelled ctx ends
// its shot on a goroutine of its own).
func awaitShots(ctx context.Context, c *Conn, n int) error {
	for shotCount(c) != n {
		if !retry.Sleep(ctx, 10*time.Millisecond) {
			return fmt.Errorf("the table still holds %d shots, want %d", shotCount(c), n)
		}
	}
	return nil
}

func TestReconnectReArmsExactlyWhatIsHeld(t *testing.T) {
	runWatchScenario(t, 1, func(ctx context.Context, c *Conn, k *eventSink, dir string) error {
		p, q := dir+"/routed", dir+"/shot"
		if _, err := watchBoth(ctx, ctx, c, k, p); err != nil {
			return err
		}
		if _, err := c.Create(ctx, q, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			return err
		}
		_, _, qShot, err := c.GetW(ctx, q)
		if err != nil {
			return err
		}
		_, _, dirShot, err := c.ChildrenW(ctx, dir)
		if err != nil {
			return err
		}
		if err := expectWatches(ctx, c, p, q); err != nil {
			return err
		}
		c.wire.closeCurrent() // the connection drops; the session lives
		for _, sh := range []<-chan zk.Event{qShot, dirShot} {
			select {
			case ev := <-sh:
				if ev.Type != zk.EventNotWatching || ev.State != zk.StateDisconnected {
					return fmt.Errorf("a one-shot watch ended with %+v, want EventNotWatching, StateDisconnected", ev)
				}
			case <-ctx.Done():
				return fmt.Errorf("a one-shot watch did not end with the connection: %w", ctx.Err())
			}
		}
		if err := k.awaitSession(ctx, Connected); err != nil {
			return err
		}
		if held, shots := heldKeys(c), shotCount(c); len(held) != 0 || shots != 0 {
			return fmt.Errorf("after the reconnect the table holds %v and %d shots, want nothing", held, shots)
		}
		if err := expectWatches(ctx, c); err != nil {
			return fmt.Errorf("on the new connection before any re-read: %w", err)
		}
		if _, err := c.WatchData(ctx, p); err != nil { // the routed user re-reads
			return err
		}
		if held := heldKeys(c); !slices.Equal(held, []watchKey{{p, watchData}}) {
			return fmt.Errorf("after the routed re-read the table holds %v, want the data watch of %s", held, p)
		}
		if err := expectWatches(ctx, c, p); err != nil {
			return fmt.Errorf("after the routed re-read: %w", err)
		}
		c.DropWatch(p, k)
		if err := expectWatches(ctx, c); err != nil {
			return err
		}
		return tableEmpty(c)
	})
}
