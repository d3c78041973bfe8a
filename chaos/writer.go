package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkelect/zkelect/zxidfence"
)

// writeTimeout bounds one write attempt, whatever the leadership does.
const writeTimeout = 5 * time.Second

// guards are the fenced resources a chaos leader writes to: one row per
// shard in a SQL table shared by every member process, and one target
// znode per shard written through the ZooKeeper guard.
type guards struct {
	sql     *zxidfence.SQL
	zk      *zxidfence.ZooKeeper
	dataDir string // parent znode of the ZooKeeper targets
}

// writerTerm is one leadership as a writer acts on it.
type writerTerm struct {
	member string
	shard  string
	leader zxidfence.Leader // election znode, version and fence
}

// actAsLeader records the acquisition of t, writes to both guards every
// period until ctx (the leadership's context) ends, and records the
// release once no write of the term is in flight.
//
// The writer checks its leadership, then waits for the next tick and writes
// without checking again: a leader whose check and act are separated by a
// pause (GC, SIGSTOP, a slow disk). A pause that lands in that window sends
// a write with a deposed token, which the guards must refuse.
func actAsLeader(ctx context.Context, rec *Recorder, g *guards, t writerTerm, period time.Duration) {
	tok := t.leader.Fence.Token
	_ = rec.Record(Record{Kind: KindAcquire, Member: t.member, Shard: t.shard, Token: tok})
	defer func() {
		r := Record{Kind: KindRelease, Member: t.member, Shard: t.shard, Token: tok}
		if err := context.Cause(ctx); err != nil {
			r.Detail = err.Error()
		}
		_ = rec.Record(r)
	}()
	tick := time.NewTicker(period)
	defer tick.Stop()
	for seq := 0; ctx.Err() == nil; seq++ {
		<-tick.C // deliberately not selecting on ctx: see above
		value := fmt.Appendf(nil, "%s %d", t.member, seq)
		attempt(rec, t, "sql:"+t.shard, func(wctx context.Context) error {
			return g.sql.Write(wctx, t.shard, t.leader.Fence, value)
		})
		attempt(rec, t, "zk:"+t.shard, func(wctx context.Context) error {
			return g.zk.Write(wctx, g.dataDir+"/"+t.shard, t.leader, value)
		})
	}
}

// attempt runs one write with its own deadline and records its outcome.
func attempt(rec *Recorder, t writerTerm, resource string, write func(context.Context) error) {
	wctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	start := time.Now()
	err := write(wctx)
	r := Record{Kind: KindWrite, Member: t.member, Shard: t.shard, Token: t.leader.Fence.Token,
		Generation: t.leader.Fence.Generation, Resource: resource, Start: start, Result: classify(err)}
	if r.Result == Failed {
		r.Detail = err.Error()
	}
	_ = rec.Record(r)
}

// classify maps a guard's error to a write Result.
func classify(err error) Result {
	switch {
	case err == nil:
		return Accepted
	case errors.Is(err, zxidfence.ErrStaleToken):
		return RejectedStale
	case errors.Is(err, zxidfence.ErrNotLeader):
		return RejectedNotLeader
	default:
		return Failed
	}
}
