package partition_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// startLog records every leadership start of a fleet: shard, member, when.
type startLog struct {
	mu     sync.Mutex
	starts []leaderStart
}

type leaderStart struct {
	shard, member string
	at            time.Time
}

// wrap returns tune's OnStartedLeading recording into the log first.
func (sl *startLog) wrap(id string) func(*partition.Config) {
	return func(c *partition.Config) {
		next := c.OnStartedLeading
		c.OnStartedLeading = func(ctx context.Context, shard string, token zxidfence.Token) {
			sl.mu.Lock()
			sl.starts = append(sl.starts, leaderStart{shard: shard, member: id, at: time.Now()})
			sl.mu.Unlock()
			next(ctx, shard, token)
		}
	}
}

// takenBack returns the shards member started leading after from that
// another member started leading after from too, before it.
func (sl *startLog) takenBack(member string, from time.Time) []string {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	ledElsewhere := map[string]bool{}
	var out []string
	for _, s := range sl.starts {
		switch {
		case s.at.Before(from):
		case s.member != member:
			ledElsewhere[s.shard] = true
		case ledElsewhere[s.shard]:
			out = append(out, s.shard)
		}
	}
	return out
}

// graceTick is the shared test server's tickTime: the sweep's step.
const graceTick = 100 * time.Millisecond

// TestCutOffHealedAroundTheRecordDeletionTakesNothingBack cuts a member
// off (blackholed, its new connections refused) during a freeze and heals
// it at each tick of a sweep (17 ticks, run at once) such that it comes
// back, on a new session, from before the others' grace ends to over a
// second after they delete its record (go-zookeeper reconnects one to two
// seconds after the heal, at its own retry steps; each run logs where its
// return fell). Back on a new session after the others' grace ended (its member znode's deletion plus the grace: they delete its
// record at their next look, and its shards are theirs), it never leads a
// shard that another member led meanwhile; back before, its grace may
// give it its shards back, as a restart within the grace does. It used to
// count its grace from when its loop last saw the session connected, up
// to two thirds of a session timeout after the server last heard of it,
// and so came back into a grace the others had ended, reserving (and, in
// the freeze, getting back) shards they had taken over.
func TestCutOffHealedAroundTheRecordDeletionTakesNothingBack(t *testing.T) {
	var wg sync.WaitGroup // every point at once, whatever -parallel says: each waits out seconds of timeouts
	for k := -6; k <= 10; k++ {
		wg.Go(func() {
			t.Run(fmt.Sprintf("heal%+dticks", k), func(t *testing.T) { cutOffAndHealAt(t, time.Duration(k)*graceTick) })
		})
	}
	wg.Wait()
}

// sweepGrace is the restart grace of the sweep's members: longer than
// go-zookeeper's reconnection after a heal, so that a heal after the
// session's expiry can bring the member back before its record's deletion.
const sweepGrace = 3 * time.Second

// cutOffAndHealAt runs one point of the sweep: the member c heals offset
// after 1.25 s before the instant the others can first delete its record
// (its member znode's deletion plus the restart grace), so that it comes
// back around that instant.
func cutOffAndHealAt(t *testing.T, offset time.Duration) {
	tr, sl, root, shards := newTracker(), &startLog{}, newRoot(t), partition.Range(0, 9)
	regs := map[string]*prometheus.Registry{}
	tune := func(id string) []func(*partition.Config) {
		regs[id] = prometheus.NewRegistry()
		return []func(*partition.Config){sl.wrap(id), func(c *partition.Config) { c.RestartGrace, c.Metrics = sweepGrace, regs[id] }}
	}
	proxy := zkc.NewProxyT(t)
	via := &cutDialer{via: proxy.Dialer(), rejectAfter: max(offset+6*graceTick, 0) / 2}
	a := startMember(t, root, "a", shards, tr, tune("a")...)
	b := startMember(t, root, "b", shards, tr, tune("b")...)
	c := startMemberOn(t, connectDialing(t, via.dial), root, "c", shards, tr, tune("c")...)
	waitBalanced(t, shards, []*member{a, b, c}, 20*time.Second)
	freezeFleet(t, root, regs)
	had, oldID := len(c.m.Leaderships()), c.sess.ID()
	cut := time.Now()
	via.refused.Store(true)
	proxy.Blackhole()
	gone := awaitDeleted(t, a.sess, path.Join(root, "members", "c"), 10*time.Second)
	deleted := make(chan time.Time, 1)
	go func() { deleted <- awaitDeletedQuiet(a.sess, path.Join(root, "owners", "c"), 10*time.Second) }()
	time.Sleep(time.Until(gone.Add(sweepGrace - 1250*time.Millisecond + offset))) // the heal instant under test, not synchronisation
	proxy.Heal()
	via.refused.Store(false)
	waitFor(t, 20*time.Second, "c's new session", func() (bool, string) {
		id := c.sess.ID()
		return id != oldID && id != 0, fmt.Sprintf("session 0x%x", id)
	})
	back := time.Now()
	waitFor(t, 20*time.Second, "c to register again on its new session", func() (bool, string) {
		live, err := partition.LiveMembers(t.Context(), a.sess, root)
		return err == nil && len(live) == 3, fmt.Sprint(live, err)
	})
	time.Sleep(1500 * time.Millisecond) // a window for c to take shards, not synchronisation
	got, graceEnd := sl.takenBack("c", cut), gone.Add(sweepGrace)
	if back.After(graceEnd) && len(got) != 0 {
		t.Errorf("c, back %v after the others' grace ended, took back %v, which another member led while it was cut off",
			back.Sub(graceEnd).Round(time.Millisecond), got)
	}
	desc := "its record never deleted"
	if del := <-deleted; !del.IsZero() {
		desc = fmt.Sprintf("%+v after its record's deletion", back.Sub(del).Round(time.Millisecond))
	}
	t.Logf("new session %+v after the others' grace ended, %s; c leads %d of its %d, %d of them led by another member meanwhile",
		back.Sub(graceEnd).Round(time.Millisecond), desc, len(c.m.Leaderships()), had, len(got))
	tr.check(t, false)
}

// cutDialer dials through via, or fails after rejectAfter while refused
// is set: a network that rejects a cut-off client's connections, late by
// a round trip that differs from one point of the sweep to the next. The
// client retries at go-zookeeper's pace (a second after each failed
// round), so its return after the heal falls at the first retry after it:
// the rejection's delay moves those retries, and with them the return,
// across the second.
type cutDialer struct {
	refused     atomic.Bool
	rejectAfter time.Duration
	via         func(network, address string, timeout time.Duration) (net.Conn, error)
}

func (d *cutDialer) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	if d.refused.Load() {
		time.Sleep(min(d.rejectAfter, timeout)) // the network's answer, not synchronisation
		return nil, errors.New("test: connection refused while cut off")
	}
	return d.via(network, address, timeout)
}

// cutOffTimeout is the session timeout of the member cut off: the longest
// the shared server grants, so that the span its loop used to miss (two
// thirds of it) is wider than go-zookeeper's retry steps.
const cutOffTimeout = 2 * time.Second

// connectDialing opens a session to the shared server through dial, with
// cutOffTimeout, closed at cleanup.
func connectDialing(t *testing.T, dial func(network, address string, timeout time.Duration) (net.Conn, error)) *recipe.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	sess, err := recipe.Connect(ctx, zkc.Addrs(), recipe.WithSessionTimeout(cutOffTimeout),
		recipe.WithLogger(zerolog.Nop()), recipe.WithDialer(dial))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// freezeFleet freezes root and waits until every member whose registry
// regs holds sees the freeze (zkelect_partition_frozen).
func freezeFleet(t *testing.T, root string, regs map[string]*prometheus.Registry) {
	t.Helper()
	if _, err := newOperator(t, root).Freeze(t.Context(), "test", 0); err != nil {
		t.Fatalf("Freeze: %v", err)
	}
	waitFor(t, 10*time.Second, "every member to see the freeze (zkelect_partition_frozen)", func() (bool, string) {
		seen := map[string]float64{}
		for id, reg := range regs {
			seen[id] = gauge(t, reg, "zkelect_partition_frozen")
			if seen[id] != 1 {
				return false, fmt.Sprint(seen)
			}
		}
		return true, fmt.Sprint(seen)
	})
}

// awaitDeleted polls p every 10ms until it does not exist, and returns
// when it saw it gone.
func awaitDeleted(t *testing.T, sess *recipe.Session, p string, timeout time.Duration) time.Time {
	t.Helper()
	at := awaitDeletedQuiet(sess, p, timeout)
	if at.IsZero() {
		t.Fatalf("timed out after %v waiting for %s to be deleted", timeout, p)
	}
	return at
}

// awaitDeletedQuiet is awaitDeleted returning the zero time on a timeout.
func awaitDeletedQuiet(sess *recipe.Session, p string, timeout time.Duration) time.Time {
	var at time.Time
	_, _, _ = tryWaitFor(timeout, func() (bool, string) {
		ok, _, err := sess.Exists(context.Background(), p)
		if err == nil && !ok {
			at = time.Now()
			return true, ""
		}
		return false, ""
	})
	return at
}
