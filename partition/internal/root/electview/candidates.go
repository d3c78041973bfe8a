package electview

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/znode"
	"github.com/zkelect/zkelect/zxidfence"
)

// An election's candidates as the view knows them: every one read whole
// at the start (and after a reconnect), each created later read once (its
// data and czxid) as its creation is notified, each deleted one removed
// as its deletion is. The first in line (by sequence number) is the
// leader, so a leader's deletion shows its successor at once, with no
// read: the view lags the election by one notification. Candidates are
// ordered by their sequence numbers (serial arithmetic, as recipe orders
// them); an election whose candidates span half the counter's circle
// (2^31 creates on one path while its oldest candidate lives) is ordered
// by czxid by recipe and may be shown with another leader here until it
// is read whole again.

// cand is one candidate.
type cand struct {
	seq     int32
	read    bool // member, token and session are known
	member  string
	token   zxidfence.Token
	session int64
}

// candRead asks for one created candidate's read.
type candRead struct {
	election string
	znode    string
}

// named is a candidate with its znode path.
type named struct {
	znode string
	c     cand
}

// firstOf returns the first candidate in line.
func firstOf(cs map[string]cand) (named, bool) {
	var first named
	ok := false
	for p, c := range cs {
		if !ok || before(c.seq, first.c.seq) {
			first, ok = named{p, c}, true
		}
	}
	return first, ok
}

// readCand reads one created candidate and reports it.
func (t *Elections) readCand(ctx context.Context, r candRead) {
	res := readResult{path: r.election, znode: r.znode}
	begin := time.Now()
	data, st, err := t.sess.Get(ctx, r.znode)
	res.rtt = time.Since(begin)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		res.gone = true
	case err != nil:
		res.err = err
	default:
		seq, _ := znode.Seq(znode.Name(r.znode))
		res.c = cand{seq: seq, read: true, member: string(data), token: zxidfence.Token(st.Czxid), session: st.EphemeralOwner}
	}
	select {
	case t.results <- res:
	case <-ctx.Done():
	}
}

// candDone applies a candidate's read.
func (t *Elections) candDone(r readResult) {
	delete(t.candBusy, r.znode)
	cs := t.cands[r.path]
	if _, still := cs[r.znode]; !still {
		return // deleted, or the election read whole meanwhile
	}
	switch {
	case r.gone:
		delete(cs, r.znode)
	case r.err != nil:
		t.log.Warn().Err(r.err).Str("znode", r.znode).Msg("read candidate for the leaders' view; reading its election whole")
		t.mark(r.path)
		return
	default:
		cs[r.znode] = r.c
	}
	t.recompute(r.path)
}

// queueCand asks for candidate z of election p to be read.
func (t *Elections) queueCand(p, z string) {
	t.candQueue = append(t.candQueue, candRead{election: p, znode: z})
}

// hurry moves election p's first candidate to the urgent reads when the
// view waits on its read to show p's leader.
func (t *Elections) hurry(p string) {
	if first, ok := firstOf(t.cands[p]); ok && !first.c.read && !t.candBusy[first.znode] {
		t.candUrgent = append(t.candUrgent, candRead{election: p, znode: first.znode})
	}
}

// dispatchCands starts reads of the candidates of q, in order, while the
// window has room, and returns what is left of q. A candidate deleted or
// read meanwhile, being read, or whose election is read whole, is
// dropped from q.
func (t *Elections) dispatchCands(ctx context.Context, q []candRead) []candRead {
	for len(q) > 0 && t.inFlight() < t.win.limit {
		r := q[0]
		q = q[1:]
		c, still := t.cands[r.election][r.znode]
		if !still || c.read || t.candBusy[r.znode] || t.reading[r.election] {
			continue
		}
		t.candBusy[r.znode] = true
		t.wg.Add(1)
		go func() { defer t.wg.Done(); t.readCand(ctx, r) }()
	}
	if len(q) == 0 {
		return nil // let the backing array go
	}
	return q
}
