package electview

import (
	"context"
	"errors"
	"slices"
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

// candBatch is the most candidates one request reads (a multiRead of
// getData: about 200 bytes of reply each, far within jute.maxbuffer).
const candBatch = 128

// candResult is one candidate's read in a batch.
type candResult struct {
	candRead
	c    cand  // what it read
	gone bool  // the candidate was deleted before it was read
	err  error // its own read's error
}

// readCands reads a batch of created candidates with one request
// (recipe.Session.GetMany) and reports them.
func (t *Elections) readCands(ctx context.Context, rs []candRead) {
	paths := make([]string, len(rs))
	for i, r := range rs {
		paths[i] = r.znode
	}
	begin := time.Now()
	got, err := t.sess.GetMany(ctx, paths)
	res := readResult{err: err, rtt: time.Since(begin), cands: make([]candResult, len(rs))}
	for i, r := range rs {
		cr := candResult{candRead: r}
		if err == nil {
			g := got[i]
			switch {
			case errors.Is(g.Err, zk.ErrNoNode):
				cr.gone = true
			case g.Err != nil:
				cr.err = g.Err
			default:
				seq, _ := znode.Seq(znode.Name(r.znode))
				cr.c = cand{seq: seq, read: true, member: string(g.Data), token: zxidfence.Token(g.Stat.Czxid), session: g.Stat.EphemeralOwner}
			}
		}
		res.cands[i] = cr
	}
	select {
	case t.results <- res:
	case <-ctx.Done():
	}
}

// candsDone applies a batch of candidate reads. A failed one asks for a
// whole read of its election (the request's failure, one warning, for
// every candidate of the batch).
func (t *Elections) candsDone(r readResult) {
	t.candReqs--
	if r.err != nil {
		t.log.Warn().Err(r.err).Int("candidates", len(r.cands)).Msg("read created candidates for the leaders' view; reading their elections whole")
	}
	for _, cr := range r.cands {
		delete(t.candBusy, cr.znode)
		switch {
		case r.err != nil:
			t.candFailed(cr.candRead)
		case cr.err != nil:
			t.log.Warn().Err(cr.err).Str("znode", cr.znode).Msg("read candidate for the leaders' view; reading its election whole")
			t.candFailed(cr.candRead)
		default:
			t.candDone(cr)
		}
	}
}

// candFailed asks for a whole read of the election of a candidate whose
// read failed.
func (t *Elections) candFailed(r candRead) {
	if _, still := t.cands[r.election][r.znode]; still {
		t.mark(r.election)
	}
}

// candDone applies a candidate's read.
func (t *Elections) candDone(r candResult) {
	cs := t.cands[r.election]
	if _, still := cs[r.znode]; !still {
		return // deleted, or the election read whole meanwhile
	}
	if r.gone {
		delete(cs, r.znode)
	} else {
		cs[r.znode] = r.c
	}
	t.recompute(r.election)
	t.hurry(r.election)
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

// dispatchCands starts batched reads of the candidates of the urgent
// queue, then of the queue, in order, while the window has room.
func (t *Elections) dispatchCands(ctx context.Context) {
	for t.inFlight() < t.win.limit {
		var batch []candRead
		t.candUrgent = t.takeCands(t.candUrgent, &batch)
		t.candQueue = t.takeCands(t.candQueue, &batch)
		if len(batch) == 0 {
			return
		}
		for _, r := range batch {
			t.candBusy[r.znode] = true
		}
		t.candReqs++
		t.wg.Add(1)
		go func() { defer t.wg.Done(); t.readCands(ctx, batch) }()
	}
}

// takeCands moves candidates of q to batch, up to candBatch in it, and
// returns what is left of q. A candidate deleted or read meanwhile,
// being read, or whose election is read whole, is dropped from q.
func (t *Elections) takeCands(q []candRead, batch *[]candRead) []candRead {
	for len(q) > 0 && len(*batch) < candBatch {
		r := q[0]
		q = q[1:]
		c, still := t.cands[r.election][r.znode]
		if !still || c.read || t.candBusy[r.znode] || t.reading[r.election] || slices.Contains(*batch, r) {
			continue
		}
		*batch = append(*batch, r)
	}
	if len(q) == 0 {
		return nil // let the backing array go
	}
	return q
}
