package root

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
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

	persistent map[string]bool // persistent children of members warned about; watchMembers' own
}

// NewWatcher returns the watcher of root's members, records and operator
// state, sending to out.
func NewWatcher(sess *recipe.Session, root string, out chan<- Update, log zerolog.Logger) *Watcher {
	return &Watcher{
		sess: sess, members: path.Join(root, MembersDir), owners: path.Join(root, OwnersDir),
		operator: path.Join(root, OperatorNode), out: out, log: log,
	}
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
	live, persistent, err := readMembers(ctx, w.sess, w.members, ids)
	if err != nil {
		return fmt.Errorf("read members: %w", err)
	}
	w.warnPersistent(persistent)
	if w.send(ctx, Update{Members: live}) {
		WaitWatch(ctx, ch)
	}
	return nil
}

// warnPersistent logs, once per znode while it stays, each persistent
// child of <root>/members: it is not a member (no session holds it), and
// a member id it takes cannot be registered.
func (w *Watcher) warnPersistent(ids []string) {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
		if !w.persistent[id] {
			w.log.Warn().Str("znode", path.Join(w.members, id)).
				Msg("persistent znode under members ignored: a member's znode is ephemeral")
		}
	}
	w.persistent = seen
}

// watchOwners runs one record watcher per child of <root>/owners. A record
// watcher ends when its record is deleted; the children are then listed
// again, so a record created anew gets a new watcher.
func (w *Watcher) watchOwners(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	running := map[string]bool{}
	gone := make(chan string)
	watchNew := func(ids []string) {
		for _, id := range ids {
			if running[id] {
				continue
			}
			running[id] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.watchRecord(ctx, id)
				select {
				case gone <- id:
				case <-ctx.Done():
				}
			}()
		}
	}
	retry := NewBackoff()
	for ctx.Err() == nil {
		ownersCtx, forget := context.WithCancel(ctx)
		next := w.sess.NextConnect() // a new session ends the pause
		ids, _, ch, err := w.sess.ChildrenW(ownersCtx, w.owners)
		if errors.Is(err, zk.ErrNoNode) { // a root before its first member: no records yet
			err = w.awaitCreation(ownersCtx, w.owners, func() {})
			if forget(); err == nil {
				continue
			}
		}
		if err != nil {
			forget()
			if ctx.Err() == nil { // not our own leaving
				w.failed(err).Msg("watch member records")
			}
			retry.WaitOr(ctx, next)
			continue
		}
		retry.Reset()
		watchNew(ids)
		w.awaitOwners(ctx, ch, gone, func(id string) { delete(running, id) }, watchNew)
		forget() // the watch, if it has not fired
	}
}

// awaitOwners waits until the children watch ch fires or ctx ends. When a
// record watcher ends meanwhile (its record was deleted), ended forgets it
// and the children are listed again without a new watch (ch still covers
// every later change), so that a record deleted and created anew while its
// old watcher ran gets a watcher; if that listing fails, awaitOwners
// returns for its caller to list with a new watch.
func (w *Watcher) awaitOwners(ctx context.Context, ch <-chan zk.Event, gone <-chan string, ended func(string), watchNew func([]string)) {
	for {
		select {
		case <-ch:
			return
		case <-ctx.Done():
			return
		case id := <-gone:
			ended(id)
			ids, _, err := w.sess.Children(ctx, w.owners)
			if err != nil {
				return
			}
			watchNew(ids)
		}
	}
}

// watchRecord reports a member's record each time it changes, and its
// deletion.
func (w *Watcher) watchRecord(ctx context.Context, id string) {
	retry := NewBackoff()
	for ctx.Err() == nil {
		next := w.sess.NextConnect() // a new session ends the pause
		deleted, err := w.recordOnce(ctx, id)
		if deleted {
			return
		}
		if err != nil {
			if ctx.Err() == nil { // not our own leaving
				w.failed(err).Str("record_member", id).Msg("watch member record")
			}
			retry.WaitOr(ctx, next)
			continue
		}
		retry.Reset()
	}
}

// recordOnce reports member id's record, or its deletion (deleted), and
// waits until the record may have changed or ctx ends.
func (w *Watcher) recordOnce(ctx context.Context, id string) (deleted bool, err error) {
	ctx, forget := context.WithCancel(ctx)
	defer forget() // the watch, if it has not fired
	data, st, ch, err := w.sess.GetW(ctx, path.Join(w.owners, id))
	if errors.Is(err, zk.ErrNoNode) {
		w.send(ctx, Update{Member: id})
		return true, nil
	}
	if err != nil {
		return false, err
	}
	rec, err := DecodeRecord(data)
	if err != nil {
		w.log.Warn().Err(err).Str("record_member", id).Msg("ignoring unreadable member record")
	}
	if w.send(ctx, Update{Member: id, Rec: &StoredRecord{Record: rec, Version: st.Version}}) {
		WaitWatch(ctx, ch)
	}
	return false, nil
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
