package root

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/recipe"
)

// This file watches <root>/members and <root>/owners and sends every change
// to the manager's loop. Each watched znode has one goroutine that re-arms
// its own watch after it fires, so no watch is registered twice. The
// watches are the session's one-shot ones (recipe.Session.GetW and
// ChildrenW): each lasts one round of its loop, so a watch that did not
// fire (the loop stopped, a read failed) is removed at once; one lost with
// the connection fires, and the loop reads again.

// Update is one change of the observed state.
type Update struct {
	Members  map[string]int64 // non-nil: the live members and their sessions
	Operator *StoredOperator  // non-nil: the operator state
	Member   string           // otherwise: the member whose record changed
	Rec      *StoredRecord    // its record; nil when deleted
}

// Watcher owns the watch goroutines of one Run.
type Watcher struct {
	sess     *recipe.Session
	members  string // <root>/members
	owners   string // <root>/owners
	operator string // <root>/operator
	out      chan<- Update
	log      zerolog.Logger
	wg       sync.WaitGroup

	bounds  func() *Bounds                      // what the reader takes (readbound.go)
	self    string                              // the reader's member id, kept first; "" outside the members
	refused func(kind string, count int)        // reports znodes over the bounds: "members", "records"; optional
	live    atomic.Pointer[map[string]struct{}] // the live members counted, for the records' order
	changed chan struct{}                       // the live members changed; watchOwners reorders

	persistentLog, membersLog countLog // watchMembers' own
}

// NewWatcher returns the watcher of root's members, records and operator
// state, sending to out, within the bounds of a reader without a shard
// list (OutsideBounds) unless Within gives others.
func NewWatcher(sess *recipe.Session, root string, out chan<- Update, log zerolog.Logger) *Watcher {
	outside := OutsideBounds()
	return &Watcher{
		sess: sess, members: path.Join(root, MembersDir), owners: path.Join(root, OwnersDir),
		operator: path.Join(root, OperatorNode), out: out, log: log,
		bounds: func() *Bounds { return outside }, changed: make(chan struct{}, 1),
	}
}

// Within sets, before Start, the bounds the watcher reads within (bounds
// is called at each read: a member's shard list changes at runtime), the
// reader's own member id (its member and record are always counted; ""
// outside the members), and refused, which is given the count of znodes
// over the bounds by kind ("members", "records") each time it is counted
// (nil: none). It returns w.
func (w *Watcher) Within(bounds func() *Bounds, self string, refused func(kind string, count int)) *Watcher {
	w.bounds, w.self, w.refused = bounds, self, refused
	return w
}

// Start launches the watch goroutines; they stop when ctx is done and Wait
// returns after they have.
func (w *Watcher) Start(ctx context.Context) {
	w.wg.Add(3)
	go func() { defer w.wg.Done(); w.watchMembers(ctx) }()
	go func() { defer w.wg.Done(); w.watchOwners(ctx) }()
	go func() { defer w.wg.Done(); w.watchOperator(ctx) }()
}

// Wait returns once the watch goroutines Start launched have stopped.
func (w *Watcher) Wait() { w.wg.Wait() }

// watchMembers reports the live members each time the children of
// <root>/members change.
func (w *Watcher) watchMembers(ctx context.Context) {
	retry.ForeverWaking(ctx, NewBackoff(), w.sess.NextConnect, func() error { return w.membersOnce(ctx) },
		func(err error) { w.failed(err).Msg("watch members") })
}

// membersOnce reports the live members and waits until they may have
// changed or ctx ends.
func (w *Watcher) membersOnce(ctx context.Context) error {
	ctx, forget := context.WithCancel(ctx)
	defer forget() // the watch, if it has not fired
	ids, _, ch, err := w.sess.ChildrenW(ctx, w.members)
	if errors.Is(err, zk.ErrNoNode) { // a root before its first member: no members yet
		return w.awaitCreation(ctx, w.members, func() { w.send(ctx, Update{Members: map[string]int64{}}) })
	}
	if err != nil {
		return err
	}
	m, err := readMembers(ctx, w.sess, w.members, ids)
	if err != nil {
		return fmt.Errorf("read members: %w", err)
	}
	w.warnPersistent(m.persistent)
	live := w.boundMembers(m)
	counted := make(map[string]struct{}, len(live))
	for id := range live {
		counted[id] = struct{}{}
	}
	w.live.Store(&counted)
	select {
	case w.changed <- struct{}{}:
	default:
	}
	if w.send(ctx, Update{Members: live}) {
		WaitWatch(ctx, ch)
	}
	return nil
}

// warnPersistent logs one line for the persistent children of
// <root>/members, when their count changes, at most once a minute
// (countLog): they are not members (no session holds them), and a member
// id one takes cannot be registered.
func (w *Watcher) warnPersistent(ids []string) {
	if !w.persistentLog.note(len(ids), time.Now()) {
		return
	}
	first := slices.Sorted(slices.Values(ids))[:min(len(ids), 3)]
	for i, id := range first {
		first[i] = path.Join(w.members, id)
	}
	w.log.Warn().Int("count", len(ids)).Strs("first", first).
		Msg("persistent znodes under members ignored: a member's znode is ephemeral")
}

// boundMembers returns the live members, at most Bounds.Members() of
// them: this reader's own and those with the oldest znodes (smallest
// czxid). Members left out are logged (countLog) and reported.
func (w *Watcher) boundMembers(m memberZnodes) map[string]int64 {
	limit, over := w.bounds().Members(), 0
	if len(m.live) > limit {
		ids := slices.SortedFunc(maps.Keys(m.live), func(a, b string) int {
			return cmp.Or(cmpBool(a != w.self, b != w.self), cmp.Compare(m.czxid[a], m.czxid[b]), cmp.Compare(a, b))
		})
		over = len(ids) - limit
		for _, id := range ids[limit:] {
			delete(m.live, id)
		}
	}
	w.report("members", w.members, over, &w.membersLog, func(e *zerolog.Event) {
		e.Int("counted", limit).Msg("live members over the reader's bound: the newest are not counted as members")
	})
	return m.live
}

// report gives the count of kind's znodes under dir refused to the
// metric, and logs it through log when l says so.
func (w *Watcher) report(kind, dir string, count int, l *countLog, log func(*zerolog.Event)) {
	if w.refused != nil {
		w.refused(kind, count)
	}
	if l.note(count, time.Now()) {
		log(w.log.Warn().Int("refused", count).Str("znode", dir))
	}
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// awaitCreation waits until dir (the root's members or owners, which the
// first member creates) exists or ctx ends, with an exists watch; missing
// runs once dir is seen missing. It returns nil once dir exists or ctx
// ended, else the error of the exists call.
func (w *Watcher) awaitCreation(ctx context.Context, dir string, missing func()) error {
	ctx, forget := context.WithCancel(ctx)
	defer forget() // the watch, if it has not fired
	ok, _, ch, err := w.sess.ExistsW(ctx, dir)
	if err != nil || ok {
		return err
	}
	missing()
	WaitWatch(ctx, ch)
	return nil
}

// failed starts the log line of a watch round that failed: at debug level
// when the session's connection was the cause (the session logs the
// disconnection or expiry itself, and every watcher of the process, the
// member's and a follower's, would repeat it), else at warn level.
func (w *Watcher) failed(err error) *zerolog.Event {
	if connectionCaused(err) {
		return w.log.Debug().Err(err)
	}
	return w.log.Warn().Err(err)
}

// connectionCaused reports whether err is the session's, not the watched
// znode's: a connection loss or a request that found no connection
// (retryable), an expired or closed session.
func connectionCaused(err error) bool {
	return recipe.Retryable(err) || errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrConnectionClosed) ||
		errors.Is(err, zk.ErrClosing) || errors.Is(err, recipe.ErrSessionClosed)
}

// WaitWatch waits for the watch's event or ctx.
func WaitWatch(ctx context.Context, ch <-chan zk.Event) {
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// send delivers u unless ctx ends first.
func (w *Watcher) send(ctx context.Context, u Update) bool {
	select {
	case w.out <- u:
		return true
	case <-ctx.Done():
		return false
	}
}

// NewBackoff returns the schedule of retries after ZooKeeper errors on
// the root's data: 50 ms doubling to 2 s (retry.Backoff).
func NewBackoff() *retry.Backoff {
	return &retry.Backoff{Min: 50 * time.Millisecond, Max: 2 * time.Second}
}
