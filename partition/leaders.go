package partition

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/root/electview"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// This file reports the leader of every shard to observers routing
// requests to the leaders: Config.OnLeaderChanged inside a member (as the
// members' records publish it), WatchLeaders outside (as the elections
// hold it, see internal/root/electview). Both deliver through a notifier, so
// that a slow callback holds up neither the elections nor the watches.

// ErrNilCallback reports a nil callback where one is required.
var ErrNilCallback = errors.New("partition: nil callback")

// checkWatch validates the arguments every follower takes.
func checkWatch(sess *recipe.Session, root string, fnIsNil bool) error {
	if sess == nil {
		return ErrNilSession
	}
	if fnIsNil {
		return ErrNilCallback
	}
	return rootdata.ValidateRoot(root)
}

// notifier delivers leader changes to fn, one call at a time, on the
// goroutine running deliver. It is fed either the whole state (set, from
// the elections) or what changed (follow, from a member's view); neither
// blocks: changes not delivered yet are merged, so a callback slower than
// the changes skips intermediate states and still gets the latest. A
// shard's token never goes down in what it delivers (see
// rootdata.LeaderFloor).
type notifier struct {
	fn    func(shard, member string, token zxidfence.Token)
	kick  chan struct{}                 // capacity 1: changes are waiting
	floor rootdata.LeaderFloor          // owned by the feeding goroutine
	last  map[string]rootdata.Published // set's previous state, owned by the feeding goroutine

	mu      sync.Mutex
	pending map[string]rootdata.Published // shard to its leader, changed and not yet taken (zero: none)

	sent map[string]rootdata.Published // the state delivered, owned by deliver
}

func newNotifier(fn func(shard, member string, token zxidfence.Token)) *notifier {
	return &notifier{fn: fn, kick: make(chan struct{}, 1), floor: rootdata.NewLeaderFloor(), sent: map[string]rootdata.Published{}}
}

// set hands over the whole state (shard to leader, shards without one
// left out); the notifier owns it from now on, and leaves out a lagging
// record's claim older than one it took before. It costs the state's
// size. One goroutine feeds a notifier.
func (n *notifier) set(state map[string]rootdata.Published) {
	state = n.floor.Admit(state)
	delta := map[string]rootdata.Published{}
	for _, s := range changedShards(n.last, state) {
		delta[s] = state[s]
	}
	n.last = state
	n.update(delta)
}

// follow hands over what changed in v's leaders since its last call (the
// first call: every leader v's records publish), through the floor. It
// costs the shards that changed. One goroutine feeds a notifier.
func (n *notifier) follow(v *rootdata.View) {
	v.TrackLeaders()
	delta := map[string]rootdata.Published{}
	v.LeaderChanges(func(s string, p rootdata.Published) { delta[s] = n.floor.AdmitOne(s, p) })
	n.update(delta)
}

// update merges delta (shard to its leader, the zero value: none) into
// the changes waiting for deliver.
func (n *notifier) update(delta map[string]rootdata.Published) {
	if len(delta) == 0 {
		return
	}
	n.mu.Lock()
	if n.pending == nil {
		n.pending = delta
	} else {
		maps.Copy(n.pending, delta)
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// deliver calls fn, until ctx is done, for every shard whose leader
// differs from the one last delivered (shards in id order), each time
// changes arrive. A shard that lost its leader is reported with "" and 0.
// It costs the shards changed.
func (n *notifier) deliver(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.kick:
		}
		n.mu.Lock()
		delta := n.pending
		n.pending = nil
		n.mu.Unlock()
		for _, s := range slices.Sorted(maps.Keys(delta)) {
			if ctx.Err() != nil {
				return
			}
			p := delta[s]
			if n.sent[s] == p {
				continue
			}
			if p == (rootdata.Published{}) {
				delete(n.sent, s)
			} else {
				n.sent[s] = p
			}
			n.fn(s, p.Member, p.Token)
		}
	}
}

// changedShards returns, sorted, the shards whose leader differs between
// two states.
func changedShards(old, next map[string]rootdata.Published) []string {
	var out []string
	for s, p := range next {
		if old[s] != p {
			out = append(out, s)
		}
	}
	for s := range old {
		if _, ok := next[s]; !ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// WatchLeaders calls fn with the leader of every shard under root, as the
// shard's election holds it, each time it changes: with the shard, the
// leading member (its candidate znode's data) and its fencing token (the
// znode's czxid), or "" and 0 when the shard lost its leader. Shards start
// without a leader, so the first calls report the leaders the elections
// hold once every election has been read. A shard's token never goes down
// within one call. It follows the elections with one persistent recursive
// watch on root (ZooKeeper 3.6+) and re-reads only an election whose first
// znode may have changed (see internal/root/electview), without registering,
// so any process with a session can follow the leaders, for example to
// route requests; no member record is a source of leaders. fn runs on the
// calling goroutine, one call at a time, in order; when it is slower than
// the changes, intermediate states are skipped and the latest is
// delivered. It lags an election by one notification, plus a batched
// read when the new leader's candidate was created as it won
// (partition/README.md; Config.OnLeaderChanged, from the records, by up
// to the publish interval plus a write): it is advice for routing, not a safety signal
// (the fencing token, checked by a zxidfence guard, is).
//
// It creates root's znodes if they are missing (as a member would), so it
// may start before any member. It blocks until ctx is done and then
// returns nil. A cut from ZooKeeper (connection loss, the session expired
// and replaced), even past the session timeout and at the start, is
// waited out: the leaders are read again once the session connects. It
// returns early with an error wrapping recipe.ErrSessionClosed when sess
// is closed, the session's EndErr when it ended for good, or the error of
// adding the watch or listing root for a cause other than the connection
// (a server before 3.6 refuses the watch; an ACL). It returns
// ErrNilSession, ErrNilCallback or an error wrapping ErrInvalidRoot for
// bad arguments.
func WatchLeaders(ctx context.Context, sess *recipe.Session, root string, fn func(shard, member string, token zxidfence.Token)) error {
	if err := checkWatch(sess, root, fn == nil); err != nil {
		return err
	}
	if _, err := rootdata.EnsurePaths(ctx, sess, root, zk.WorldACL(zk.PermAll), rootdata.NewRootLayout, 0); err != nil {
		log := sess.Logger()
		log.Debug().Err(err).Str("root", root).Msg("create root znodes for watching leaders; waiting for a member to")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := newNotifier(fn)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var followErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cancel() // ends deliver
		followErr = electview.Follow(ctx, sess, root, "watch leaders of", func(_ *rootdata.View, e *electview.Elections) (bool, error) {
			n.set(e.Published())
			return true, nil
		})
	}()
	n.deliver(ctx)
	cancel()
	wg.Wait()
	return followErr
}
