package routing

import (
	"context"
	"maps"
	"sync/atomic"
	"time"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/root/electview"
	"github.com/zkelect/zkelect/recipe"
)

// staleTick is how often the ZooKeeper source checks that its session is
// connected and its view in sync, which is what vouches for its view.
const staleTick = 100 * time.Millisecond

// zkSource follows a root's elections (partition/internal/root/electview)
// and its members' records, keeping its routes from what changed.
type zkSource struct {
	sess    *recipe.Session
	root    string
	metrics *clientMetrics
}

// ZooKeeper returns the source that follows root over sess as
// partition.WatchCluster does: leaders from the elections (one persistent
// recursive watch, ZooKeeper 3.6+), addresses and labels from the
// members' records. Its view is confirmed while sess is connected and the
// view in sync: not right after a reconnect, until the root has been
// listed and read again. It updates only the routes of shards whose
// leader changed (and every route when a member's address or labels do).
func ZooKeeper(sess *recipe.Session, root string) Source { return &zkSource{sess: sess, root: root} }

func (z *zkSource) check() error { return nil }

func (z *zkSource) lag(m *clientMetrics) { z.metrics = m }

func (z *zkSource) run(ctx context.Context, apply func(update), fresh func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var synced atomic.Pointer[electview.Synced]
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(staleTick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if s := synced.Load(); s != nil && z.sess.Connected() && s.Now() {
					fresh()
				}
			}
		}
	}()
	defer func() { <-done }()
	defer cancel()
	f := &zkFollower{metrics: z.metrics, apply: apply}
	outside := rootdata.OutsideBounds()
	return electview.FollowWithin(ctx, z.sess, z.root, "route", func() *rootdata.Bounds { return outside },
		func(v *rootdata.View, e *electview.Elections) (bool, error) {
			synced.Store(e.Synced())
			f.step(v, e)
			return true, nil
		})
}

// memberMeta is what routes carry of a member.
type memberMeta struct {
	address string
	labels  map[string]string
}

// zkFollower keeps the ZooKeeper source's routes; the follower's
// goroutine alone uses it.
type zkFollower struct {
	metrics *clientMetrics
	apply   func(update)
	members map[string]memberMeta // nil before the first step
	routes  map[string]Route
}

// step turns one step of the view into an update of the client's view.
func (f *zkFollower) step(v *rootdata.View, e *electview.Elections) {
	members := membersOf(v)
	changed := e.TakeChanged()
	if f.members == nil || !sameMembers(f.members, members) {
		f.members = members
		f.routes = map[string]Route{}
		for s, l := range e.Leaders() {
			f.routes[s] = f.route(s, l)
		}
		f.apply(update{all: true, routes: maps.Clone(f.routes)})
	} else if len(changed) > 0 {
		u := update{routes: map[string]Route{}}
		for _, s := range changed {
			if l, ok := e.Leader(s); ok {
				r := f.route(s, l)
				f.routes[s], u.routes[s] = r, r
			} else if _, had := f.routes[s]; had {
				delete(f.routes, s)
				u.gone = append(u.gone, s)
			}
		}
		f.apply(u)
	}
	if f.metrics != nil {
		now := time.Now()
		for _, at := range e.TakeNoticed() {
			f.metrics.viewLag.Observe(now.Sub(at).Seconds())
		}
	} else {
		e.TakeNoticed()
	}
}

// route is shard's route led by l.
func (f *zkFollower) route(s string, l electview.Leader) Route {
	m := f.members[l.Member]
	return Route{Shard: s, Member: l.Member, Address: m.address, Labels: m.labels, Token: l.Token}
}

// membersOf returns each live member's address and labels from its
// record of its current session (as partition.WatchCluster shows them).
func membersOf(v *rootdata.View) map[string]memberMeta {
	out := make(map[string]memberMeta, len(v.Members))
	for id, sess := range v.Members {
		var m memberMeta
		if r, ok := v.Records[id]; ok && r.Session == sess {
			m = memberMeta{address: r.Address, labels: maps.Clone(r.Labels)}
		}
		out[id] = m
	}
	return out
}

func sameMembers(a, b map[string]memberMeta) bool {
	return maps.EqualFunc(a, b, func(x, y memberMeta) bool { return x.address == y.address && maps.Equal(x.labels, y.labels) })
}
