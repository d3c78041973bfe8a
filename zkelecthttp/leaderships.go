package zkelecthttp

import (
	"sort"
	"sync"
	"time"

	"github.com/zkelect/zkelect/zxidfence"
)

// Leaderships records the leaderships a process holds, with when each
// began, for /v1/leaderships. The zero value is empty and ready; it is safe
// for concurrent use.
type Leaderships struct {
	mu   sync.Mutex
	next uint64              // numbers each Hold, so a late release spares a newer one
	held map[string]heldTerm // by shard
}

type heldTerm struct {
	n uint64
	Leadership
}

// Hold records that member leads shard with token from now on, until the
// returned release is called (once the leadership ended; a release after
// the shard was held again leaves the newer leadership). Call it from
// partition.Config.OnStartedLeading:
//
//	defer held.Hold(shard, member, token)()
func (l *Leaderships) Hold(shard, member string, token zxidfence.Token) (release func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = map[string]heldTerm{}
	}
	l.next++
	n := l.next
	l.held[shard] = heldTerm{n: n, Leadership: Leadership{
		Shard: shard, Member: member, Token: token.Decimal(), TokenHex: token.Hex(),
		EpochCounter: token.EpochCounter(), Since: time.Now().UTC(),
	}}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.held[shard].n == n {
			delete(l.held, shard)
		}
	}
}

// List returns the leaderships held now, ordered by shard (ShardLess).
func (l *Leaderships) List() []Leadership {
	l.mu.Lock()
	out := make([]Leadership, 0, len(l.held))
	for _, v := range l.held {
		out = append(out, v.Leadership)
	}
	l.mu.Unlock()
	sortByShard(out)
	return out
}

func sortByShard(ls []Leadership) {
	sort.Slice(ls, func(i, j int) bool { return ShardLess(ls[i].Shard, ls[j].Shard) })
}
