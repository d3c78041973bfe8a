package electview

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/internal/znode"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// Elections is the state of the elections of one root. One goroutine (the
// follower's) calls its methods; reads run on goroutines of their own and
// report on results.
type Elections struct {
	sess *recipe.Session
	root string
	log  zerolog.Logger

	watch   *recipe.TreeWatch
	batches chan recipe.TreeChanges // from pump
	pumpErr chan error              // capacity 1
	results chan readResult
	wg      sync.WaitGroup

	layout     rootdata.Layout
	elections  map[string]election        // known election paths
	cands      map[string]map[string]cand // election path to its candidates, by znode path
	leaders    map[string]Leader          // election path to its leader, if any
	dirty      map[string]bool            // elections to read whole
	reading    map[string]bool            // elections being read whole
	again      map[string]bool            // elections to read whole once their read returns
	candQueue  []candRead                 // created candidates to read
	candUrgent []candRead                 // created candidates first in line: read before the queue
	candBusy   map[string]bool            // candidate znodes being read
	candReqs   int                        // candidate reads (batches) in flight
	wholeReqs  int                        // whole reads (batches) in flight
	now        func() time.Time
	win        *window              // reads in flight at most
	listed     bool                 // the root was listed since the last resync asked
	unread     map[string]bool      // elections of the last listing not read since it
	changed    bool                 // leaders changed since taken
	changedEl  map[string]bool      // elections whose leader changed since TakeChanged
	noticed    map[string]time.Time // election to when the notification its leader waits on arrived
	shownAt    []time.Time          // notifications behind the leader changes since TakeNoticed
	conn       uint64               // the watch's connection the last relist was for
	sync       *Synced              // what other goroutines see of settled and conn
}

// readResult is a batch of reads: created candidates' or elections'
// whole.
type readResult struct {
	err    error        // the candidates' request's
	cands  []candResult // a batch of candidates' reads
	wholes []wholeRead  // a batch of elections' whole reads

	rtt time.Duration // how long the read (its last attempt) took
}

func newElections(sess *recipe.Session, root string, log zerolog.Logger) *Elections {
	return &Elections{
		sess: sess, root: root, log: log,
		batches: make(chan recipe.TreeChanges), pumpErr: make(chan error, 1), results: make(chan readResult, windowMax),
		elections: map[string]election{}, leaders: map[string]Leader{}, cands: map[string]map[string]cand{},
		dirty: map[string]bool{}, reading: map[string]bool{}, again: map[string]bool{}, candBusy: map[string]bool{},
		win: newWindow(sess.Timeout), now: time.Now, changedEl: map[string]bool{}, noticed: map[string]time.Time{}, sync: &Synced{},
	}
}

// start adds the watch, lists the root and starts the pump of its
// changes; the reads start with dispatch. A start cut off from ZooKeeper
// (the connection lost, the session expired and replaced) waits for the
// session and tries again: only a refusal (an ACL, a server before 3.6),
// the session's end or ctx's end stops it.
func (t *Elections) start(ctx context.Context) error {
	w, err := t.watchRetry(ctx)
	if err != nil {
		return fmt.Errorf("partition: watch the elections under %s: %w", t.root, err)
	}
	t.watch = w
	t.sync.watch = w
	t.wg.Add(1)
	go func() { defer t.wg.Done(); t.pump(ctx) }()
	return t.relistRetry(ctx)
}

// watchRetry adds the tree watch, retrying transient errors as soon as
// the session connects again, while ctx lives.
func (t *Elections) watchRetry(ctx context.Context) (*recipe.TreeWatch, error) {
	var b retry.Backoff
	for {
		next := t.sess.NextConnect()
		w, err := t.sess.WatchTree(ctx, t.root)
		if err == nil || !transient(err) || ctx.Err() != nil || t.sessionOver() {
			return w, err
		}
		t.log.Warn().Err(err).Msg("watch the elections for the leaders' view; again once connected")
		if !b.WaitOr(ctx, next) {
			return nil, ctx.Err()
		}
	}
}

// stop waits for the pump and the reads (ctx must be done) and removes
// the watch.
func (t *Elections) stop() {
	t.wg.Wait()
	if t.watch != nil {
		t.watch.Close()
	}
}

// pump hands the watch's batches to the follower until ctx ends or the
// session closes (reported on pumpErr).
func (t *Elections) pump(ctx context.Context) {
	for {
		b, err := t.watch.Next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				t.pumpErr <- err
			}
			return
		}
		select {
		case t.batches <- b:
		case <-ctx.Done():
			return
		}
	}
}

// relist reads the layout and every election's path, marks every listed
// election to be read, and forgets the known ones not listed (deleted
// while the watch was away: a leader of a deleted shard is not shown).
func (t *Elections) relist(ctx context.Context) error {
	layout, ids, err := rootdata.ListRoot(ctx, t.sess, t.root)
	if err != nil {
		return fmt.Errorf("partition: list the elections under %s: %w", t.root, err)
	}
	flat, err := layout.StrayElections(ctx, t.sess, t.root)
	if err != nil {
		return fmt.Errorf("partition: list the elections under %s: %w", t.root, err)
	}
	t.layout = layout
	listed := make(map[string]election, len(ids)+len(flat))
	for _, id := range ids {
		listed[layout.ShardPath(t.root, id)] = election{shard: id, flat: !layout.Bucketed()}
	}
	if layout.Migrating() {
		for _, id := range flat {
			listed[rootdata.Flat.ShardPath(t.root, id)] = election{shard: id, flat: true}
		}
	}
	for p := range t.elections {
		if _, ok := listed[p]; !ok {
			t.forget(p)
		}
	}
	t.unread = make(map[string]bool, len(listed))
	for p, el := range listed {
		t.add(p, el)
		t.unread[p] = true
	}
	t.listed = true
	return nil
}

// caughtUp reports whether every election of the last listing has been
// read since it: the view is in sync from then on, on that listing's
// connection, while later notifications' reads (a new election, a
// candidate's) are under way; those are the view following, not catching
// up on what the watch missed.
func (t *Elections) caughtUp() bool { return t.listed && len(t.unread) == 0 }

// add records election p and marks it to be read.
func (t *Elections) add(p string, el election) {
	t.elections[p] = el
	t.mark(p)
}

// mark asks for a read of p, after the one in flight if any.
func (t *Elections) mark(p string) {
	if t.reading[p] {
		t.again[p] = true
		return
	}
	t.dirty[p] = true
}

// counts reports whether election el is one of the root's: a flat
// election of a bucketed root that is not moving is a stray (see
// partition.Owner.Stray), never a leader.
func (t *Elections) counts(el election) bool {
	return !el.flat || !t.layout.Bucketed() || t.layout.Migrating()
}

// apply handles a batch of the watch; a layout change or a Resync lists
// the root again.
func (t *Elections) apply(ctx context.Context, b recipe.TreeChanges) error {
	if b.Resync {
		t.conn = b.Conn
		return t.relistRetry(ctx)
	}
	relist := false
	for _, ev := range b.Events {
		kind, p, el := classify(t.root, ev.Path)
		switch {
		case kind == pathLayout || kind == pathBucket && ev.Type == zk.EventNodeDeleted:
			relist = true
		case kind == pathElection && !t.counts(el):
		case kind == pathElection && ev.Type == zk.EventNodeCreated:
			t.add(p, el)
		case kind == pathElection && ev.Type == zk.EventNodeDeleted:
			t.forget(p)
		case kind == pathCandidate && t.counts(el):
			if _, waiting := t.noticed[p]; !waiting {
				t.noticed[p] = b.At
			}
			t.candidateChanged(ev, p, el)
		}
	}
	if relist {
		return t.relistRetry(ctx)
	}
	return nil
}

// candidateChanged applies a candidate's creation or deletion to its
// election's candidates, without reading the election again: a created
// candidate is read (its member and czxid) off the critical path, a
// deleted one removed, and the first in line becomes the leader at once
// when it has been read. While the election is read whole, the change
// asks for another whole read after it.
func (t *Elections) candidateChanged(ev zk.Event, p string, el election) {
	if _, known := t.elections[p]; !known {
		t.add(p, el)
		return
	}
	if t.reading[p] || t.dirty[p] {
		t.mark(p)
		return
	}
	cs := t.cands[p]
	switch ev.Type {
	case zk.EventNodeCreated:
		seq, ok := znode.Seq(znode.Name(ev.Path))
		if !ok {
			return // no sequence suffix: not a candidate
		}
		if cs == nil {
			cs = map[string]cand{}
			t.cands[p] = cs
		}
		cs[ev.Path] = cand{seq: seq}
		t.queueCand(p, ev.Path)
	case zk.EventNodeDeleted:
		delete(cs, ev.Path)
	case zk.EventNodeDataChanged:
		if c, ok := cs[ev.Path]; ok {
			cs[ev.Path] = cand{seq: c.seq}
			t.queueCand(p, ev.Path)
		}
	}
	t.recompute(p)
	t.hurry(p)
}

// forget drops election p (its znode is gone).
func (t *Elections) forget(p string) {
	if _, led := t.leaders[p]; led {
		t.changed = true
	}
	if _, led := t.leaders[p]; led {
		t.changedEl[p] = true
		t.shown(p)
	}
	delete(t.elections, p)
	delete(t.leaders, p)
	delete(t.cands, p)
	delete(t.dirty, p)
	delete(t.again, p)
	delete(t.unread, p)
	delete(t.noticed, p)
}

// dispatch starts reads, up to the window (requests in flight): batches
// of created candidates, those first in line (a shard shown without a
// leader until read) first, then elections marked to be read whole.
func (t *Elections) dispatch(ctx context.Context) {
	t.dispatchCands(ctx)
	for len(t.dirty) > 0 && t.inFlight() < t.win.limit {
		batch := make([]string, 0, min(len(t.dirty), wholeBatch))
		for p := range t.dirty {
			if len(batch) == wholeBatch {
				break
			}
			delete(t.dirty, p)
			t.reading[p] = true
			batch = append(batch, p)
		}
		t.wholeReqs++
		t.wg.Add(1)
		go func() { defer t.wg.Done(); t.readWhole(ctx, batch) }()
	}
}

// inFlight counts the requests in flight: whole reads and batches.
func (t *Elections) inFlight() int { return t.wholeReqs + t.candReqs }

// transient reports whether a read may succeed when asked again.
func transient(err error) bool {
	return recipe.Retryable(err) || errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrConnectionClosed)
}

// done applies a read's result.
func (t *Elections) done(r readResult) {
	if r.err == nil {
		t.win.answered(r.rtt, t.now())
	}
	if r.cands != nil {
		t.candsDone(r)
		return
	}
	t.wholeReqs--
	t.wholeDone(r.wholes)
}

// settled reports whether every election marked since the last listing
// has been read.
func (t *Elections) settled() bool {
	return t.listed && len(t.dirty) == 0 && len(t.reading) == 0
}

// recompute sets election p's leader from its candidates: the first in
// line, once read; none while the first is not read yet (it was created
// after the view last read the election), or is a persistent znode. A
// change is counted as shown (its notification's lag, TakeNoticed) once
// the first in line is read, or there is none.
func (t *Elections) recompute(p string) {
	first, ok := firstOf(t.cands[p])
	waiting := ok && !first.c.read
	led := ok && first.c.read && first.c.session != 0
	var l Leader
	if led {
		l = Leader{Member: first.c.member, Token: first.c.token, Session: first.c.session, Znode: first.znode, Seq: first.c.seq}
	}
	if old, had := t.leaders[p]; led != had || led && old != l {
		if led {
			t.leaders[p] = l
		} else {
			delete(t.leaders, p)
		}
		t.changed, t.changedEl[p] = true, true
		if !waiting {
			t.shown(p)
		}
	}
	if !waiting {
		delete(t.noticed, p)
	}
}

// Leaders returns each led shard's leader: its bucketed election's, else
// (a root moving to buckets, or a flat root) its flat election's.
func (t *Elections) Leaders() map[string]Leader {
	out := make(map[string]Leader, len(t.leaders))
	for p, l := range t.leaders {
		el := t.elections[p]
		if !t.counts(el) {
			continue
		}
		if _, set := out[el.shard]; set && el.flat {
			continue
		}
		out[el.shard] = l
	}
	return out
}

// Published returns Leaders as rootdata's claims (member and token).
func (t *Elections) Published() map[string]rootdata.Published {
	out := make(map[string]rootdata.Published, len(t.leaders))
	for s, l := range t.Leaders() {
		out[s] = rootdata.Published{Member: l.Member, Token: l.Token}
	}
	return out
}

// sessionOver reports whether the session was closed or ended for good:
// nothing is worth retrying then.
func (t *Elections) sessionOver() bool {
	select {
	case <-t.sess.Done():
		return true
	case <-t.sess.Ended():
		return true
	default:
		return false
	}
}

// relistRetry lists the root again (relist), retrying transient errors
// while ctx lives.
func (t *Elections) relistRetry(ctx context.Context) error {
	var b retry.Backoff
	for {
		next := t.sess.NextConnect()
		err := t.relist(ctx)
		if err == nil || !transient(err) || ctx.Err() != nil || t.sessionOver() {
			return err
		}
		t.log.Warn().Err(err).Msg("list the elections for the leaders' view; again once connected")
		if !b.WaitOr(ctx, next) {
			return ctx.Err()
		}
	}
}

// take reports whether the leaders changed since the last take.
func (t *Elections) take() bool {
	c := t.changed
	t.changed = false
	return c
}
