package partition_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// leaderLog keeps the latest leader reported for each shard, and fails the
// test on a call in progress once the watch it follows ended.
type leaderLog struct {
	t *testing.T

	mu    sync.Mutex
	ended <-chan struct{}            // closed when Run or WatchLeaders returned; nil until set
	state map[string]partition.Owner // Member and Token only
	calls int
}

func newLeaderLog(t *testing.T) *leaderLog {
	return &leaderLog{t: t, state: map[string]partition.Owner{}}
}

// endsWith names the channel that the goroutine running the watch closes
// as soon as the watch returned (before it reports the return to anyone):
// a call still in progress then, or made later, fails the test.
func (l *leaderLog) endsWith(ended <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = ended
}

// record is the callback. It checks ended as it returns: a closed channel
// means the call was still in progress after the watch returned.
func (l *leaderLog) record(shard, member string, token zxidfence.Token) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.checkEnded(shard, member, token)
	l.calls++
	if member == "" {
		delete(l.state, shard)
		return
	}
	l.state[shard] = partition.Owner{Member: member, Token: token}
}

// checkEnded fails the test if the watch has returned; l.mu is held.
func (l *leaderLog) checkEnded(shard, member string, token zxidfence.Token) {
	if l.ended == nil {
		return
	}
	select {
	case <-l.ended:
		l.t.Errorf("leader of %s reported (%s, %v) after the watch returned", shard, member, token)
	default:
	}
}

// matches reports whether the reported leaders are exactly those the
// members say they lead, with their tokens.
func (l *leaderLog) matches(ms []*member) (bool, string) {
	want := map[string]partition.Owner{}
	for _, mb := range ms {
		for s, tok := range mb.m.Leaderships() {
			want[s] = partition.Owner{Member: mb.id, Token: tok}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	got := maps.Clone(l.state)
	if len(got) != len(want) {
		return false, fmt.Sprintf("%d shards reported led, members lead %d (%d calls)", len(got), len(want), l.calls)
	}
	for s, o := range want {
		if g := got[s]; g.Member != o.Member || g.Token != o.Token {
			return false, fmt.Sprintf("shard %s reported led by %q with %v, led by %s with %v", s, g.Member, g.Token, o.Member, o.Token)
		}
	}
	return true, ""
}

// TestOnLeaderChangedFollowsTheLeaders: a member's OnLeaderChanged sees the
// leader of every shard after a cold start, follows the takeover when a
// member stops, and is not called after Run returned.
func TestOnLeaderChangedFollowsTheLeaders(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 30)
	log := newLeaderLog(t)
	observe := func(c *partition.Config) { c.OnLeaderChanged = log.record }
	a := startMember(t, root, "a", shards, tr, observe)
	log.endsWith(a.ended)
	b := startMember(t, root, "b", shards, tr)
	c := startMember(t, root, "c", shards, tr)
	ms := []*member{a, b, c}
	waitBalanced(t, shards, ms, 20*time.Second)
	waitFor(t, 10*time.Second, "a's OnLeaderChanged to report every leader", func() (bool, string) { return log.matches(ms) })
	c.stop(t)
	ms = ms[:2]
	waitBalanced(t, shards, ms, 20*time.Second)
	waitFor(t, 10*time.Second, "a's OnLeaderChanged to report c's shards taken over", func() (bool, string) { return log.matches(ms) })
	b.stop(t)
	a.stop(t)
	tr.check(t, false)
}

// TestSlowOnLeaderChangedHoldsUpNothing blocks OnLeaderChanged: the members
// still converge, and once released it catches up with the latest leaders
// (skipping the states in between).
func TestSlowOnLeaderChangedHoldsUpNothing(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 20)
	log := newLeaderLog(t)
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	defer unblock() // before the members stop: Run waits for a call in progress
	var blocked atomic.Int64
	slow := func(c *partition.Config) {
		c.OnLeaderChanged = func(shard, member string, token zxidfence.Token) {
			if blocked.Add(1) == 1 {
				<-release
			}
			log.record(shard, member, token)
		}
	}
	a := startMember(t, root, "a", shards, tr, slow)
	waitBalanced(t, shards, []*member{a}, 20*time.Second)
	b := startMember(t, root, "b", shards, tr)
	ms := []*member{a, b}
	waitBalanced(t, shards, ms, 20*time.Second)
	if n := blocked.Load(); n != 1 {
		t.Fatalf("OnLeaderChanged entered %d times while its first call was blocked, want 1", n)
	}
	unblock()
	waitFor(t, 10*time.Second, "the released callback to catch up", func() (bool, string) { return log.matches(ms) })
	tr.check(t, true)
}

// watchLeaders runs WatchLeaders on root into a leaderLog until stop,
// which fails the test if WatchLeaders returned an error.
func watchLeaders(t *testing.T, sess *recipe.Session, root string) (log *leaderLog, stop func()) {
	t.Helper()
	log = newLeaderLog(t)
	ctx, cancel := context.WithCancel(t.Context())
	done, ended := make(chan error, 1), make(chan struct{})
	log.endsWith(ended)
	go func() {
		err := partition.WatchLeaders(ctx, sess, root, log.record)
		close(ended)
		done <- err
	}()
	return log, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchLeaders: %v", err)
		}
	}
}

// TestWatchLeadersFromOutside follows the leaders from a session that is
// not a member, started before any member: it sees every leader after the
// cold start, the takeover of a stopped member's shards, and no call after
// it returned.
func TestWatchLeadersFromOutside(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 30)
	log, stop := watchLeaders(t, connect(t, sessionTimeout), root)
	defer stop()
	ms := []*member{startMember(t, root, "a", shards, tr), startMember(t, root, "b", shards, tr), startMember(t, root, "c", shards, tr)}
	waitBalanced(t, shards, ms, 20*time.Second)
	waitFor(t, 10*time.Second, "WatchLeaders to report every leader", func() (bool, string) { return log.matches(ms) })
	ms[2].stop(t)
	ms = ms[:2]
	waitBalanced(t, shards, ms, 20*time.Second)
	waitFor(t, 10*time.Second, "WatchLeaders to report c's shards taken over", func() (bool, string) { return log.matches(ms) })
	tr.check(t, false)
}

// TestWatchLeadersEnds: bad arguments are refused at once, and a closed
// session ends the watch with recipe.ErrSessionClosed.
func TestWatchLeadersEnds(t *testing.T) {
	sess, fn := connect(t, sessionTimeout), func(string, string, zxidfence.Token) {}
	for _, tt := range []struct {
		name string
		sess *recipe.Session
		root string
		fn   func(string, string, zxidfence.Token)
		want error
	}{
		{"nil session", nil, "/x", fn, partition.ErrNilSession},
		{"nil callback", sess, "/x", nil, partition.ErrNilCallback},
		{"relative root", sess, "x", fn, partition.ErrInvalidRoot},
	} {
		if err := partition.WatchLeaders(t.Context(), tt.sess, tt.root, tt.fn); !errors.Is(err, tt.want) {
			t.Errorf("%s: WatchLeaders = %v, want %v", tt.name, err, tt.want)
		}
	}
	done := make(chan error, 1)
	go func() { done <- partition.WatchLeaders(t.Context(), sess, newRoot(t), fn) }()
	if err := sess.Close(); err != nil {
		t.Fatalf("close session: %v", err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, recipe.ErrSessionClosed) {
			t.Errorf("WatchLeaders after the session closed = %v, want recipe.ErrSessionClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WatchLeaders still running 10s after its session was closed")
	}
}
