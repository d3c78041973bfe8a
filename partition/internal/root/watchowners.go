package root

import (
	"cmp"
	"context"
	"errors"
	"path"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"
)

// This file watches the records under <root>/owners: one goroutine per
// record watched, at most Bounds.Members() of them (readbound.go), chosen
// in order: the reader's own record, then the live members', then the
// others' by id. The choice is made again when the children of
// <root>/owners or the live members change; a record no longer chosen
// stops being watched and is reported deleted.

// recordWatch is one record's watcher goroutine.
type recordWatch struct {
	cancel  context.CancelFunc
	evicted bool // stopped because no longer chosen: report the record deleted once it ends
}

// ownersWatch is watchOwners' state; that goroutine owns it.
type ownersWatch struct {
	w       *Watcher
	ctx     context.Context
	wg      sync.WaitGroup
	running map[string]*recordWatch
	gone    chan goneRecord
	listed  []string // the latest listing of <root>/owners
	log     countLog
}

// goneRecord is a record watcher that ended.
type goneRecord struct {
	id string
	rw *recordWatch
}

// watchOwners runs the record watchers. A record watcher ends when its
// record is deleted; the children are then listed again, so a record
// created anew gets a new watcher.
func (w *Watcher) watchOwners(ctx context.Context) {
	o := &ownersWatch{w: w, ctx: ctx, running: map[string]*recordWatch{}, gone: make(chan goneRecord)}
	defer o.wg.Wait()
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
		o.listed = ids
		o.choose()
		o.await(ch)
		forget() // the watch, if it has not fired
	}
}

// await waits until the children watch ch fires or ctx ends. When a record
// watcher ends meanwhile (its record was deleted, or it is no longer
// chosen), it is forgotten and, for a deleted record, the children are
// listed again without a new watch (ch still covers every later change),
// so that a record deleted and created anew while its old watcher ran gets
// a watcher; if that listing
// fails, await returns for its caller to list with a new watch. When the
// live members change, the records are chosen again.
func (o *ownersWatch) await(ch <-chan zk.Event) {
	for {
		select {
		case <-ch:
			return
		case <-o.ctx.Done():
			return
		case <-o.w.changed:
			o.choose()
		case g := <-o.gone:
			if o.ended(g) {
				o.choose() // the listing stands: the record was not deleted
				continue
			}
			ids, _, err := o.w.sess.Children(o.ctx, o.w.owners)
			if err != nil {
				return
			}
			o.listed = ids
			o.choose()
		}
	}
}

// ended forgets a record watcher that ended; one stopped because no longer
// chosen (evicted) has its record reported deleted (the reader forgets it).
func (o *ownersWatch) ended(g goneRecord) (evicted bool) {
	if o.running[g.id] == g.rw {
		delete(o.running, g.id)
	}
	if g.rw.evicted {
		o.w.send(o.ctx, Update{Member: g.id})
	}
	return g.rw.evicted
}

// choose starts a watcher for each chosen record not watched and stops
// those watched and no longer chosen; records left out are logged
// (countLog) and reported. Watchers still stopping count towards the
// bound: the rest start as they end (ended, then choose again).
func (o *ownersWatch) choose() {
	chosen, over := o.w.chooseRecords(o.listed)
	for id, rw := range o.running {
		if _, ok := chosen[id]; !ok && !rw.evicted {
			rw.evicted = true
			rw.cancel()
		}
	}
	limit := o.w.bounds().Members()
	for id := range chosen {
		if _, ok := o.running[id]; !ok && len(o.running) < limit { // watchers stopping count until they end
			o.start(id)
		}
	}
	o.w.report("records", o.w.owners, over, &o.log, func(e *zerolog.Event) {
		e.Int("watched", len(chosen)).Msg("member records over the reader's bound: records of members not counted as live are not read")
	})
}

// start runs id's record watcher.
func (o *ownersWatch) start(id string) {
	ctx, cancel := context.WithCancel(o.ctx)
	rw := &recordWatch{cancel: cancel}
	o.running[id] = rw
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		defer cancel()
		o.w.watchRecord(ctx, id)
		select {
		case o.gone <- goneRecord{id, rw}:
		case <-o.ctx.Done():
		}
	}()
}

// chooseRecords returns the records of ids (the children of <root>/owners)
// to watch, at most Bounds.Members() of them: the reader's own, then the
// live members', then the others' by id; and how many are left out.
func (w *Watcher) chooseRecords(ids []string) (map[string]struct{}, int) {
	limit := w.bounds().Members()
	var live map[string]struct{}
	if p := w.live.Load(); p != nil {
		live = *p
	}
	rank := func(id string) int {
		switch _, isLive := live[id]; {
		case id == w.self && id != "":
			return 0
		case isLive:
			return 1
		}
		return 2
	}
	if len(ids) > limit {
		ids = slices.Clone(ids)
		slices.SortFunc(ids, func(a, b string) int { return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b)) })
	}
	chosen := make(map[string]struct{}, min(len(ids), limit))
	for _, id := range ids[:min(len(ids), limit)] {
		chosen[id] = struct{}{}
	}
	return chosen, len(ids) - len(chosen)
}

// watchRecord reports a member's record each time it changes, and its
// deletion.
func (w *Watcher) watchRecord(ctx context.Context, id string) {
	retry := NewBackoff()
	var dec RecordDecoder // the record read before spares the bounds' lookups of the same ids
	for ctx.Err() == nil {
		next := w.sess.NextConnect() // a new session ends the pause
		deleted, err := w.recordOnce(ctx, id, &dec)
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
// waits until the record may have changed, the bounds it was read within
// are retired (Bounds.Retire) or ctx ends. A record over the
// reader's bounds (DecodeRecordWithin) or unreadable is reported empty: its
// member claims nothing.
func (w *Watcher) recordOnce(ctx context.Context, id string, dec *RecordDecoder) (deleted bool, err error) {
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
	b := w.bounds()
	rec, err := dec.Decode(data, b)
	if err != nil {
		w.log.Warn().Err(err).Str("record_member", id).Int32("version", st.Version).Msg("ignoring unreadable member record")
	}
	if w.send(ctx, Update{Member: id, Rec: &StoredRecord{Record: rec, Version: st.Version}}) {
		select { // the record changed, or the bounds did (read it again within the new ones)
		case <-ch:
		case <-b.Retired():
		case <-ctx.Done():
		}
	}
	return false, nil
}
