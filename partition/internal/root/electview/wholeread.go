package electview

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/internal/znode"
	"github.com/zkelect/zkelect/zxidfence"
)

// Whole reads of elections (at a start, after a reconnect, after a
// candidate's read failed), in batches: one multiRead lists up to
// wholeBatch elections, then multiReads of up to candBatch getData read
// every candidate listed. A relist of 10,000 elections is then about 160
// requests, not 20,000 one after another per election.

// wholeBatch is the most elections one batch reads whole.
const wholeBatch = 128

// wholeRead is one election's whole read: its candidates, by znode path
// (a missing election has none), or the error reading it failed with.
type wholeRead struct {
	path  string
	cands map[string]cand
	err   error
}

// readWhole reads the elections of paths whole until the reads answer or
// ctx ends, backing off after transient errors (a pause the session's
// next connect ends), and reports them.
func (t *Elections) readWhole(ctx context.Context, paths []string) {
	var b retry.Backoff
	for {
		begin, next := t.now(), t.sess.NextConnect()
		ws, err := t.readWholeOnce(ctx, paths)
		if err == nil || ctx.Err() != nil || !transient(err) {
			if err != nil { // every election of the batch failed alike
				ws = make([]wholeRead, len(paths))
				for i, p := range paths {
					ws[i] = wholeRead{path: p, err: err}
				}
			}
			select {
			case t.results <- readResult{wholes: ws, rtt: t.now().Sub(begin)}:
			case <-ctx.Done():
			}
			return
		}
		if !b.WaitOr(ctx, next) {
			return
		}
	}
}

// readWholeOnce lists the elections of paths with one request and reads
// every candidate listed, candBatch a request.
func (t *Elections) readWholeOnce(ctx context.Context, paths []string) ([]wholeRead, error) {
	ls, err := t.sess.ChildrenMany(ctx, paths)
	if err != nil {
		return nil, err
	}
	out := make([]wholeRead, len(paths))
	var cpaths []string
	var owner []int // index in out of each of cpaths' election
	for i, l := range ls {
		out[i] = wholeRead{path: paths[i], cands: map[string]cand{}}
		switch {
		case errors.Is(l.Err, zk.ErrNoNode): // no election: no candidates
		case l.Err != nil:
			out[i].err = l.Err
		default:
			for _, name := range l.Names {
				if _, ok := znode.Seq(name); ok { // no sequence suffix: not a candidate
					cpaths, owner = append(cpaths, paths[i]+"/"+name), append(owner, i)
				}
			}
		}
	}
	for len(cpaths) > 0 {
		n := min(len(cpaths), candBatch)
		got, err := t.sess.GetMany(ctx, cpaths[:n])
		if err != nil {
			return nil, err
		}
		for j, g := range got {
			w := &out[owner[j]]
			switch {
			case errors.Is(g.Err, zk.ErrNoNode): // left meanwhile
			case g.Err != nil:
				w.err = g.Err
			default:
				seq, _ := znode.Seq(znode.Name(cpaths[j]))
				w.cands[cpaths[j]] = cand{seq: seq, read: true, member: string(g.Data), token: zxidfence.Token(g.Stat.Czxid), session: g.Stat.EphemeralOwner}
			}
		}
		cpaths, owner = cpaths[n:], owner[n:]
	}
	return out, nil
}

// wholeDone applies a batch of whole reads.
func (t *Elections) wholeDone(ws []wholeRead) {
	for _, w := range ws {
		delete(t.reading, w.path)
		if t.again[w.path] { // asked again since it was sent (a listing among others)
			delete(t.again, w.path)
			t.dirty[w.path] = true
		} else {
			delete(t.unread, w.path)
		}
		if _, known := t.elections[w.path]; !known {
			continue // gone meanwhile
		}
		if w.err != nil {
			t.log.Warn().Err(w.err).Str("election", w.path).Msg("read election for the leaders' view; its leader is shown as last read")
			continue
		}
		t.cands[w.path] = w.cands
		t.recompute(w.path)
	}
}
