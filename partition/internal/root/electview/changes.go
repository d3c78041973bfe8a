package electview

import (
	"time"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// What changed since a follower last looked, for followers that keep
// their own picture incrementally (partition/routing) instead of taking
// Leaders whole at each step, and the lag of each change behind the
// notification that caused it.

// TakeChanged returns the shards whose leader changed (or may have) since
// the last call, and forgets them. Follow forgets them after each step
// whether or not the step took them.
func (t *Elections) TakeChanged() []string {
	out := make([]string, 0, len(t.changedEl))
	seen := make(map[string]bool, len(t.changedEl))
	for p := range t.changedEl {
		el, known := t.elections[p]
		if !known {
			var kind pathKind
			kind, _, el = classify(t.root, p)
			if kind != pathElection {
				continue
			}
		}
		if !seen[el.shard] {
			seen[el.shard] = true
			out = append(out, el.shard)
		}
	}
	clear(t.changedEl)
	return out
}

// Leader returns shard's leader as Leaders would give it: its bucketed
// election's, else its flat election's (a root moving to buckets, or a
// flat root).
func (t *Elections) Leader(shard string) (Leader, bool) {
	if t.layout.Bucketed() {
		if l, ok := t.leaders[t.layout.ShardPath(t.root, shard)]; ok {
			return l, true
		}
		if !t.layout.Migrating() {
			return Leader{}, false
		}
	}
	l, ok := t.leaders[rootdata.Flat.ShardPath(t.root, shard)]
	return l, ok
}

// shown counts election p's change as shown: its notification's arrival
// is kept for TakeNoticed.
func (t *Elections) shown(p string) {
	if at, ok := t.noticed[p]; ok && !at.IsZero() {
		t.shownAt = append(t.shownAt, at)
	}
}

// TakeNoticed returns, for each leader change since the last call that
// a notification caused, when that notification reached this process
// (the leader changes a listing found have none), and forgets them. The
// follower's lag is the time from each to when it shows the change.
// Follow forgets them after each step whether or not the step took them.
func (t *Elections) TakeNoticed() []time.Time {
	out := t.shownAt
	t.shownAt = nil
	return out
}

// forgetTaken drops what the step did not take, so that a follower that
// never takes them holds nothing.
func (t *Elections) forgetTaken() {
	clear(t.changedEl)
	t.shownAt = nil
}
