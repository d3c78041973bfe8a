package routing

import (
	"context"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// staleTick is how often the ZooKeeper source checks that its session is
// connected, which is what vouches for its view.
const staleTick = 100 * time.Millisecond

// zkSource follows a root with partition.WatchCluster.
type zkSource struct {
	sess *recipe.Session
	root string
}

// ZooKeeper returns the source that follows root over sess with
// partition.WatchCluster: leaders from the elections (one persistent
// recursive watch, ZooKeeper 3.6+), addresses and labels from the
// members' records. Its view is confirmed while sess is connected.
func ZooKeeper(sess *recipe.Session, root string) Source { return &zkSource{sess: sess, root: root} }

func (z *zkSource) check() error { return nil }

func (z *zkSource) run(ctx context.Context, set func(Table), fresh func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
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
				if z.sess.Connected() {
					fresh()
				}
			}
		}
	}()
	defer func() { <-done }()
	defer cancel()
	return partition.WatchCluster(ctx, z.sess, z.root, func(c partition.Cluster) {
		routes := make(map[string]Route, len(c.Leaders))
		for s, l := range c.Leaders {
			m := c.Members[l.Member]
			routes[s] = Route{Shard: s, Member: l.Member, Address: l.Address, Labels: m.Labels, Token: l.Token}
		}
		set(Table{Routes: routes})
	})
}
