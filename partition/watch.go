package partition

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/zkconn"
	"github.com/zkelect/zkelect/recipe"
)

// This file watches <root>/members and <root>/owners and sends every change
// to the manager's loop. Each watched znode has one goroutine that re-arms
// its own watch after it fires, so no watch is registered twice. The
// watches are the session's one-shot ones (recipe.Session.GetW and
// ChildrenW): each lasts one round of its loop, so a watch that did not
// fire (the loop stopped, a read failed) is removed at once; one lost with
// the connection fires, and the loop reads again.

// update is one change of the observed state.
type update struct {
	members  map[string]int64 // non-nil: the live members and their sessions
	operator *storedOperator  // non-nil: the operator state
	member   string           // otherwise: the member whose record changed
	rec      *storedRecord    // its record; nil when deleted
}

// watcher owns the watch goroutines of one Run.
type watcher struct {
	sess     *recipe.Session
	members  string // <root>/members
	owners   string // <root>/owners
	operator string // <root>/operator
	out      chan<- update
	log      zerolog.Logger
	wg       sync.WaitGroup

	persistent map[string]bool // persistent children of members warned about; watchMembers' own
}

// newWatcher returns the watcher of root's members, records and operator
// state, sending to out.
func newWatcher(sess *recipe.Session, root string, out chan<- update, log zerolog.Logger) *watcher {
	return &watcher{
		sess: sess, members: path.Join(root, membersDir), owners: path.Join(root, ownersDir),
		operator: path.Join(root, operatorNode), out: out, log: log,
	}
}

// start launches the watch goroutines; they stop when ctx is done and wait
// returns after they have.
func (w *watcher) start(ctx context.Context) {
	w.wg.Add(3)
	go func() { defer w.wg.Done(); w.watchMembers(ctx) }()
	go func() { defer w.wg.Done(); w.watchOwners(ctx) }()
	go func() { defer w.wg.Done(); w.watchOperator(ctx) }()
}

func (w *watcher) wait() { w.wg.Wait() }

// watchMembers reports the live members each time the children of
// <root>/members change.
func (w *watcher) watchMembers(ctx context.Context) {
	retry := newBackoff()
	for ctx.Err() == nil {
		if err := w.membersOnce(ctx); err != nil && ctx.Err() == nil { // not our own leaving
			w.log.Warn().Err(err).Msg("watch members")
			retry.wait(ctx)
			continue
		}
		retry.reset()
	}
}

// membersOnce reports the live members and waits until they may have
// changed or ctx ends.
func (w *watcher) membersOnce(ctx context.Context) error {
	ctx, forget := context.WithCancel(ctx)
	defer forget() // the watch, if it has not fired
	ids, _, ch, err := w.sess.ChildrenW(ctx, w.members)
	if err != nil {
		return err
	}
	live, persistent, err := readMembers(ctx, w.sess, w.members, ids)
	if err != nil {
		return fmt.Errorf("read members: %w", err)
	}
	w.warnPersistent(persistent)
	if w.send(ctx, update{members: live}) {
		waitWatch(ctx, ch)
	}
	return nil
}

// warnPersistent logs, once per znode while it stays, each persistent
// child of <root>/members: it is not a member (no session holds it), and
// a member id it takes cannot be registered.
func (w *watcher) warnPersistent(ids []string) {
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
func (w *watcher) watchOwners(ctx context.Context) {
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
	retry := newBackoff()
	for ctx.Err() == nil {
		ownersCtx, forget := context.WithCancel(ctx)
		ids, _, ch, err := w.sess.ChildrenW(ownersCtx, w.owners)
		if err != nil {
			forget()
			if ctx.Err() == nil { // not our own leaving
				w.log.Warn().Err(err).Msg("watch member records")
			}
			retry.wait(ctx)
			continue
		}
		retry.reset()
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
func (w *watcher) awaitOwners(ctx context.Context, ch <-chan zk.Event, gone <-chan string, ended func(string), watchNew func([]string)) {
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
func (w *watcher) watchRecord(ctx context.Context, id string) {
	retry := newBackoff()
	for ctx.Err() == nil {
		deleted, err := w.recordOnce(ctx, id)
		if deleted {
			return
		}
		if err != nil {
			if ctx.Err() == nil { // not our own leaving
				w.log.Warn().Err(err).Str("record_member", id).Msg("watch member record")
			}
			retry.wait(ctx)
			continue
		}
		retry.reset()
	}
}

// recordOnce reports member id's record, or its deletion (deleted), and
// waits until the record may have changed or ctx ends.
func (w *watcher) recordOnce(ctx context.Context, id string) (deleted bool, err error) {
	ctx, forget := context.WithCancel(ctx)
	defer forget() // the watch, if it has not fired
	data, st, ch, err := w.sess.GetW(ctx, path.Join(w.owners, id))
	if errors.Is(err, zk.ErrNoNode) {
		w.send(ctx, update{member: id})
		return true, nil
	}
	if err != nil {
		return false, err
	}
	rec, err := decodeRecord(data)
	if err != nil {
		w.log.Warn().Err(err).Str("record_member", id).Msg("ignoring unreadable member record")
	}
	if w.send(ctx, update{member: id, rec: &storedRecord{record: rec, version: st.Version}}) {
		waitWatch(ctx, ch)
	}
	return false, nil
}

// waitWatch waits for the watch's event or ctx.
func waitWatch(ctx context.Context, ch <-chan zk.Event) {
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// send delivers u unless ctx ends first.
func (w *watcher) send(ctx context.Context, u update) bool {
	select {
	case w.out <- u:
		return true
	case <-ctx.Done():
		return false
	}
}

// backoff spaces out retries after ZooKeeper errors: 50ms doubling to 2s,
// on the connection layer's one retry schedule.
type backoff struct{ b zkconn.Backoff }

func newBackoff() *backoff {
	return &backoff{zkconn.Backoff{Min: 50 * time.Millisecond, Max: 2 * time.Second}}
}

func (b *backoff) reset() { b.b.Reset() }

// wait blocks for the next delay or until ctx is done.
func (b *backoff) wait(ctx context.Context) { zkconn.Sleep(ctx, b.b.Next()) }
