package partition_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// sessionTimeout is the session timeout of the tests' members.
const sessionTimeout = time.Second

var rootSeq atomic.Int64

// newRoot returns a partition root no other test uses.
func newRoot(t testing.TB) string {
	return fmt.Sprintf("/partition-test/%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), rootSeq.Add(1))
}

// connect opens a session to the shared server, closed at cleanup.
func connect(t testing.TB, timeout time.Duration) *recipe.Session {
	t.Helper()
	return connectTo(t, zkc.Addrs(), timeout)
}

// connectTo opens a session to addrs, closed at cleanup.
func connectTo(t testing.TB, addrs []string, timeout time.Duration) *recipe.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	sess, err := recipe.Connect(ctx, addrs, recipe.WithSessionTimeout(timeout), recipe.WithLogger(zerolog.Nop()))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// testLogger logs to the test's output when PARTITION_TEST_LOG is set
// (debug level), and nowhere otherwise.
func testLogger(t testing.TB, id string) zerolog.Logger {
	if os.Getenv("PARTITION_TEST_LOG") == "" {
		return zerolog.Nop()
	}
	return zerolog.New(zerolog.NewTestWriter(t)).With().Timestamp().Str("m", id).Logger()
}

// member is one Manager running in the test process on its own session.
type member struct {
	id     string
	sess   *recipe.Session
	m      *partition.Manager
	cancel context.CancelFunc
	done   chan error
	ended  chan struct{} // closed the moment Run returned, before done gets its error
	once   sync.Once
	// runs runs m (m.Run when nil; partition.RunHoldingWon for a test
	// that holds its runners).
	runs func(ctx context.Context) error
}

// startMember runs a Manager for id under root; tune edits its config.
// It is stopped at cleanup if the test did not stop it.
func startMember(t *testing.T, root, id string, shards []string, tr *tracker, tune ...func(*partition.Config)) *member {
	t.Helper()
	return startMemberOn(t, connect(t, sessionTimeout), root, id, shards, tr, tune...)
}

// startMemberOn is startMember on a given session.
func startMemberOn(t *testing.T, sess *recipe.Session, root, id string, shards []string, tr *tracker, tune ...func(*partition.Config)) *member {
	t.Helper()
	mb := newMember(t, sess, root, id, shards, tr, tune...)
	mb.run(t)
	return mb
}

// newMember is startMemberOn without starting Run.
func newMember(t *testing.T, sess *recipe.Session, root, id string, shards []string, tr *tracker, tune ...func(*partition.Config)) *member {
	t.Helper()
	cfg := partition.Config{
		MemberID:         id,
		Shards:           shards,
		OnStartedLeading: tr.started(id, 0),
		OnStoppedLeading: tr.stopped(id),
		HandoffTimeout:   5 * time.Second,
		Logger:           testLogger(t, id),
	}
	for _, f := range tune {
		f(&cfg)
	}
	m, err := partition.NewManager(sess, root, cfg)
	if err != nil {
		t.Fatalf("NewManager(%s): %v", id, err)
	}
	return &member{id: id, sess: sess, m: m, done: make(chan error, 1), ended: make(chan struct{})}
}

// run starts the member's Run; it is stopped at cleanup if the test did
// not stop it.
func (mb *member) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	mb.cancel = cancel
	runs := mb.runs
	if runs == nil {
		runs = mb.m.Run
	}
	go func() {
		err := runs(ctx)
		close(mb.ended)
		mb.done <- err
	}()
	t.Cleanup(func() { mb.stop(t) })
}

// stop cancels the member's Run and waits for it to return.
func (mb *member) stop(t testing.TB) {
	t.Helper()
	mb.once.Do(func() {
		mb.cancel()
		select {
		case err := <-mb.done:
			if err != nil {
				t.Errorf("member %s: Run: %v", mb.id, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("member %s: Run did not return within 30s of its ctx being cancelled", mb.id)
		}
	})
}

// leaders returns shard → member over the given members' Leaderships, and
// fails on a shard led by two of them at once. The members' maps are read
// one after another, so a shard handed from an earlier-read member to a
// later-read one in between shows in both: a shard counts as led twice
// only if it does again when the members are read in the reverse order
// (a handoff in between cannot show twice then). The tracker's guard
// checks the leaderships' callbacks for overlaps exactly.
func leaders(t testing.TB, ms []*member) map[string]string {
	t.Helper()
	out, dups := snapshotLeaders(slices.All(ms))
	if len(dups) == 0 {
		return out
	}
	_, again := snapshotLeaders(slices.Backward(ms))
	for s, pair := range dups {
		if _, ok := again[s]; ok {
			t.Errorf("shard %s led by %s and %s at once", s, pair[0], pair[1])
		}
	}
	return out
}

// snapshotLeaders reads the members' Leaderships in order: shard → member,
// and the shards found in two members' maps with both members.
func snapshotLeaders(ms iter.Seq2[int, *member]) (map[string]string, map[string][2]string) {
	out, dups := map[string]string{}, map[string][2]string{}
	for _, mb := range ms {
		for s := range mb.m.Leaderships() {
			if other, dup := out[s]; dup {
				dups[s] = [2]string{other, mb.id}
			}
			out[s] = mb.id
		}
	}
	return out, dups
}

// balanced reports whether every shard is led and nobody leads more than
// ceil(shards/members), with a description of the state.
func balanced(shards []string, lead map[string]string, nMembers int) (bool, string) {
	count := map[string]int{}
	for _, m := range lead {
		count[m]++
	}
	ceil := (len(shards) + nMembers - 1) / nMembers
	desc := fmt.Sprintf("%d/%d shards led, per member %v (ceil %d)", len(lead), len(shards), count, ceil)
	if len(lead) != len(shards) || len(count) != nMembers {
		return false, desc
	}
	for _, n := range count {
		if n > ceil {
			return false, desc
		}
	}
	return true, desc
}

// waitFor polls cond every 10ms until it holds, failing after timeout with
// what was awaited and cond's last description.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	d, desc, ok := tryWaitFor(timeout, cond)
	if !ok {
		t.Fatalf("timed out after %v waiting for %s: %s", timeout, what, desc)
	}
	return d
}

// tryWaitFor is waitFor that reports a timeout instead of failing.
func tryWaitFor(timeout time.Duration, cond func() (bool, string)) (time.Duration, string, bool) {
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		ok, desc := cond()
		if ok {
			return time.Since(start), desc, true
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return timeout, desc, false
		}
	}
}

// waitBalanced waits until ms lead every shard, balanced.
func waitBalanced(t testing.TB, shards []string, ms []*member, timeout time.Duration) (map[string]string, time.Duration) {
	t.Helper()
	var lead map[string]string
	d := waitFor(t, timeout, "balanced leadership", func() (bool, string) {
		lead = leaders(t, ms)
		return balanced(shards, lead, len(ms))
	})
	return lead, d
}

// moved counts shards whose leader differs between two snapshots.
func moved(before, after map[string]string) int {
	n := 0
	for s, m := range after {
		if before[s] != m {
			n++
		}
	}
	return n
}

// tokensOf returns the tokens of a member's leaderships, sorted.
func tokensOf(m *partition.Manager) []zxidfence.Token {
	return slices.Sorted(maps.Values(m.Leaderships()))
}

var _ = errors.Is
