package zkelecthttp

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/zkelect/zkelect/partition"
)

// This file keeps the whole root's picture (partition.WatchCluster) for
// /v1/owners, and the numbered stream of leader changes that /v1/watch
// serves: a ring of recent events, so that a client reconnecting with the
// last event id it saw resumes without a gap.

// hubRing is how many recent leader changes the hub keeps for resuming.
const hubRing = 8192

// subscriberBuffer is how many events a slow /v1/watch client may lag
// behind before it is cut off (it reconnects and resumes by event id).
const subscriberBuffer = 1024

// hub follows a root and fans its leader changes out.
type hub struct {
	stream string // names this process's stream in event ids: its start time
	root   string
	shards []string // this member's shards: /v1/owners lists them all
	closed chan struct{}
	live   func() bool // whether the picture is vouched for now: in sync (partition.ClusterSync.InSync)

	mu      sync.Mutex
	ready   bool // the first picture arrived
	cluster partition.Cluster
	since   map[string]time.Time // shard → when its current leadership was first seen
	seq     uint64               // id of the last event
	ring    []LeaderEvent        // the last hubRing events, oldest first
	subs    map[chan LeaderEvent]struct{}
}

func newHub(root string, shards []string, live func() bool) *hub {
	return &hub{
		stream: strconv.FormatInt(time.Now().UnixNano(), 36),
		root:   root, shards: slices.Clone(shards), closed: make(chan struct{}), live: live,
		since: map[string]time.Time{}, subs: map[chan LeaderEvent]struct{}{},
	}
}

// follow runs watch (partition.WatchClusterChanges) until ctx is done,
// then closes the hub (every subscriber's stream ends).
func (h *hub) follow(ctx context.Context, watch func(context.Context, func(partition.ClusterChange)) error) error {
	defer h.close()
	return watch(ctx, h.update)
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.closed)
	for ch := range h.subs {
		close(ch)
		delete(h.subs, ch)
	}
}

// update takes a change of the picture and numbers one event per shard
// whose leader changed, in shard order. It costs in proportion to the
// shards the change lists (and the members), unless the change is whole.
func (h *hub) update(ch partition.ClusterChange) {
	now := time.Now().UTC()
	h.mu.Lock()
	defer h.mu.Unlock()
	var shards []string
	if ch.Whole || !h.ready {
		old := h.cluster.Leaders
		h.cluster = ch.Cluster.Clone()
		shards = changedLeaders(old, h.cluster.Leaders)
	} else {
		for _, s := range ch.Shards {
			if l, ok := ch.Cluster.Leaders[s]; ok {
				h.cluster.Leaders[s] = l
			} else {
				delete(h.cluster.Leaders, s)
			}
		}
		members := ch.Cluster
		members.Leaders = nil
		members = members.Clone()
		h.cluster.Members, h.cluster.Operator = members.Members, members.Operator
		shards = slices.Clone(ch.Shards)
		sort.Slice(shards, func(i, j int) bool { return ShardLess(shards[i], shards[j]) })
	}
	h.ready = true
	for _, s := range shards {
		l, led := h.cluster.Leaders[s]
		ev := LeaderEvent{Time: now, Shard: s}
		if led {
			id, tok := l.Member, NewToken(l.Token)
			ev.Leader, ev.Token, ev.Address = &id, &tok, l.Address
			h.since[s] = now
		} else {
			delete(h.since, s)
		}
		h.emitLocked(ev)
	}
}

// emitLocked numbers ev, keeps it in the ring and sends it to every
// subscriber; one too far behind is cut off.
func (h *hub) emitLocked(ev LeaderEvent) {
	h.seq++
	ev.ID = h.seq
	if len(h.ring) == hubRing {
		h.ring = h.ring[1:]
	}
	h.ring = append(h.ring, ev)
	for ch := range h.subs {
		select {
		case ch <- ev:
		default:
			close(ch)
			delete(h.subs, ch)
		}
	}
}

// changedLeaders returns, sorted, the shards whose leader or token differs.
func changedLeaders(old, next map[string]partition.ShardLeader) []string {
	var out []string
	for s, l := range next {
		if o, ok := old[s]; !ok || o.Member != l.Member || o.Token != l.Token {
			out = append(out, s)
		}
	}
	for s := range old {
		if _, ok := next[s]; !ok {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return ShardLess(out[i], out[j]) })
	return out
}

// subscribe registers a stream. With resume (a last event id the client
// saw) still in the ring it returns the events after it; otherwise it
// returns a snapshot of every shard (and the id it is current at) for the
// client to start from. The channel then carries every later event, and is
// closed when the hub closes or the client falls too far behind.
func (h *hub) subscribe(resume *uint64) (replay []LeaderEvent, snap *Owners, at uint64, ch chan LeaderEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch = make(chan LeaderEvent, subscriberBuffer)
	select {
	case <-h.closed:
		close(ch)
		return nil, nil, h.seq, ch
	default:
	}
	h.subs[ch] = struct{}{}
	if resume != nil && *resume <= h.seq && (len(h.ring) > 0 && *resume+1 >= h.ring[0].ID || *resume == h.seq) {
		for _, ev := range h.ring {
			if ev.ID > *resume {
				replay = append(replay, ev)
			}
		}
		return replay, nil, h.seq, ch
	}
	return nil, h.ownersLocked(), h.seq, ch
}

// unsubscribe ends a stream.
func (h *hub) unsubscribe(ch chan LeaderEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[ch]; ok {
		close(ch)
		delete(h.subs, ch)
	}
}

// owners returns /v1/owners, and false before the first picture arrived.
func (h *hub) owners() (*Owners, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ownersLocked(), h.ready
}

// ownersLocked is the root's picture: every shard of this member and every
// led shard, with leader, address, token and since; every member; the
// operator state.
func (h *hub) ownersLocked() *Owners {
	c := h.cluster
	st := &Owners{Root: h.root, Shards: []Shard{}, Members: map[string]int{}, Operator: OperatorOf(c, time.Now())}
	seen := map[string]bool{}
	add := func(s string) {
		if seen[s] {
			return
		}
		seen[s] = true
		sj := Shard{Shard: s, Standbys: []string{}}
		if l, ok := c.Leaders[s]; ok {
			t, since := NewToken(l.Token), h.since[s]
			sj.Leader, sj.Address, sj.Token, sj.Since = l.Member, l.Address, &t, &since
			st.Members[l.Member]++
		}
		st.Shards = append(st.Shards, sj)
	}
	for _, s := range h.shards {
		add(s)
	}
	for s := range c.Leaders {
		add(s)
	}
	for id := range c.Members {
		if _, ok := st.Members[id]; !ok {
			st.Members[id] = 0
		}
	}
	sort.Slice(st.Shards, func(i, j int) bool { return ShardLess(st.Shards[i].Shard, st.Shards[j].Shard) })
	st.MemberList = MembersOf(c, st.Members)
	return st
}
