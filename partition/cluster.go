package partition

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/root/electview"
	"github.com/zkelect/zkelect/recipe"
)

// This file gives a root's whole picture to routers, dashboards and CLIs:
// every shard's leader as its election holds it, with its member's address
// and labels, every live member's metadata and the operator state (the
// members' records and <root>/operator), once (ReadCluster) or at every
// change (WatchCluster).

// ReadCluster reads root's picture once: the live members, their records
// and the operator state (one read each), and every election (in
// multiReads of 128 elections' listings, then of 128 candidates' data). It returns ErrNilSession, an
// error wrapping ErrInvalidRoot, ctx's error, or ZooKeeper's wrapped with
// the path. A root nobody registered under gives an empty Cluster.
func ReadCluster(ctx context.Context, sess *recipe.Session, root string) (Cluster, error) {
	if sess == nil {
		return Cluster{}, ErrNilSession
	}
	if err := rootdata.ValidateRoot(root); err != nil {
		return Cluster{}, err
	}
	st, version, err := rootdata.ReadOperatorState(ctx, sess, path.Join(root, rootdata.OperatorNode))
	if err != nil {
		return Cluster{}, err
	}
	live, err := LiveMembers(ctx, sess, root)
	if err != nil {
		return Cluster{}, err
	}
	v := rootdata.NewView(false)
	v.Apply(rootdata.Update{Members: live})
	v.Apply(rootdata.Update{Operator: &rootdata.StoredOperator{OperatorState: st, Version: version}})
	for id := range live {
		rec, err := readRecord(ctx, sess, path.Join(root, rootdata.OwnersDir, id))
		if err != nil {
			return Cluster{}, err
		}
		if rec != nil {
			v.Apply(rootdata.Update{Member: id, Rec: rec})
		}
	}
	leaders, err := electview.Read(ctx, sess, root)
	if err != nil {
		return Cluster{}, err
	}
	return clusterOf(v, publishedOf(leaders)), nil
}

// publishedOf returns leaders as claims (member and token).
func publishedOf(leaders map[string]electview.Leader) map[string]rootdata.Published {
	out := make(map[string]rootdata.Published, len(leaders))
	for s, l := range leaders {
		out[s] = rootdata.Published{Member: l.Member, Token: l.Token}
	}
	return out
}

// readRecord reads one member's record; nil when there is none.
func readRecord(ctx context.Context, sess *recipe.Session, p string) (*rootdata.StoredRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, st, err := sess.Get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("partition: read %s: %w", p, err)
	}
	r, err := rootdata.DecodeRecord(data)
	if err != nil {
		return nil, nil // unreadable: as the watcher, ignore it
	}
	return &rootdata.StoredRecord{Record: r, Version: st.Version}, nil
}

// WatchCluster calls fn with root's picture (see Cluster) each time it
// changes: once the members, the operator state, the records and every
// election known at the start have been read, then after every burst of
// changes, in order, none skipped (fn owns each Cluster; a slow fn holds
// up only this watch, never the members' elections). Like WatchLeaders it
// reads without registering and takes leaders from the elections (one
// persistent recursive watch on root, ZooKeeper 3.6+): it lags an election
// by one notification and the reads of the changed elections (batched:
// partition/README.md "Leader reports"). It is advice for routing, not a
// safety signal. A shard's token in Cluster.Leaders never goes down within
// one call (each is a later election's czxid). It blocks until ctx is done
// and returns nil, or an error wrapping recipe.ErrSessionClosed when sess
// is closed, or the error of adding the watch or listing root at the start
// for a cause other than the connection (a server before 3.6 refuses the
// watch; a start cut off from ZooKeeper, even past the session timeout,
// waits for the session to connect again); ErrNilSession, ErrNilCallback or
// an error wrapping ErrInvalidRoot for bad arguments.
//
// It reads the records within the bounds of a reader without a shard
// list (up to 16 MiB decompressed, up to 4,096 members and records: see
// partition/README.md); Manager.WatchCluster reads within a member's.
// WatchClusterSynced also tells when its picture is in sync.
func WatchCluster(ctx context.Context, sess *recipe.Session, root string, fn func(Cluster)) error {
	return WatchClusterSynced(ctx, sess, root, fn, nil)
}

// WatchClusterSynced is WatchCluster keeping sync (unless nil) told
// whether its picture is in sync with ZooKeeper (ClusterSync.InSync), for
// those who vouch for the picture, as the daemon's /v1/watch heartbeats
// do. Give each call its own ClusterSync. Errors as WatchCluster's.
func WatchClusterSynced(ctx context.Context, sess *recipe.Session, root string, fn func(Cluster), sync *ClusterSync) error {
	return WatchClusterChanges(ctx, sess, root, owned(fn), sync)
}

// WatchClusterChanges is WatchClusterSynced for those who keep their own
// picture: fn gets each change with the shards whose leader changed and
// the watch's own picture, not a copy, so a change costs the watch and fn
// in proportion to the shards it changed rather than to the root's size
// (one copy of a 100,000-shard picture costs milliseconds; see
// BenchmarkWatchClusterStep). sync may be nil. Errors as WatchCluster's.
func WatchClusterChanges(ctx context.Context, sess *recipe.Session, root string, fn func(ClusterChange), sync *ClusterSync) error {
	outside := rootdata.OutsideBounds()
	return watchCluster(ctx, sess, root, func() *rootdata.Bounds { return outside }, fn, sync)
}

// WatchCluster is the package's WatchCluster as this member reads its
// root (m's session and root): within the bounds of its shard list (the
// one SetShards last gave; partition/README.md "Bounds"), so a record
// larger than the list allows is refused, and claims of shards outside the
// list are ignored. Routers and the daemon's /v1/owners (package
// zkelecthttp) that run beside a member follow the root this way. Errors
// as WatchCluster's.
func (m *Manager) WatchCluster(ctx context.Context, fn func(Cluster)) error {
	return m.WatchClusterSynced(ctx, fn, nil)
}

// WatchClusterSynced is Manager.WatchCluster keeping sync (unless nil)
// told whether its picture is in sync, as WatchClusterSynced; the daemon's
// /v1/watch sends heartbeats only while it is. Errors as WatchCluster's.
func (m *Manager) WatchClusterSynced(ctx context.Context, fn func(Cluster), sync *ClusterSync) error {
	return m.WatchClusterChanges(ctx, owned(fn), sync)
}

// WatchClusterChanges is Manager.WatchClusterSynced giving each change as
// the package's WatchClusterChanges does (the daemon's /v1/owners and
// /v1/watch follow the root so). Errors as WatchCluster's.
func (m *Manager) WatchClusterChanges(ctx context.Context, fn func(ClusterChange), sync *ClusterSync) error {
	return watchCluster(ctx, m.sess, m.root, m.bounds, fn, sync)
}

// bounds returns the bounds of the member's shard list now
// (rootdata.Bounds): what it reads from its root, replaced by SetShards.
func (m *Manager) bounds() *rootdata.Bounds { return m.readBounds.Load() }

// ClusterSync tells any goroutine whether the picture of the
// WatchClusterSynced call it was given to is in sync with ZooKeeper now:
// the call's session is connected, its tree watch is held on the session's
// current connection and every election listed since the watch was added
// there has been read. It is not before the first picture, nor right after
// a reconnect until the root has been listed and read again (a change made
// while the watch was away is known only then), nor once the call
// returned. The routing client's ZooKeeper source (partition/routing)
// vouches for its view by the same rule. The zero value is ready to use;
// its methods are safe for concurrent use.
type ClusterSync struct {
	sess atomic.Pointer[recipe.Session]   // the watching call's, while it runs
	view atomic.Pointer[electview.Synced] // its view's, from its first picture
}

// InSync reports whether the picture is in sync now (see ClusterSync).
func (s *ClusterSync) InSync() bool {
	sess, v := s.sess.Load(), s.view.Load()
	return sess != nil && v != nil && sess.Connected() && v.Now()
}

// follow ties s to a watching call on sess; the returned func unties it.
func (s *ClusterSync) follow(sess *recipe.Session) func() {
	s.view.Store(nil)
	s.sess.Store(sess)
	return func() { s.sess.Store(nil); s.view.Store(nil) }
}

// watchCluster is WatchClusterChanges within bounds.
func watchCluster(ctx context.Context, sess *recipe.Session, root string, bounds func() *rootdata.Bounds, fn func(ClusterChange), sync *ClusterSync) error {
	if err := checkWatch(sess, root, fn == nil); err != nil {
		return err
	}
	if sync != nil {
		defer sync.follow(sess)()
	}
	var p picture
	return electview.FollowWithin(ctx, sess, root, "watch cluster", bounds, func(v *rootdata.View, e *electview.Elections) (bool, error) {
		if sync != nil {
			sync.view.Store(e.Synced())
		}
		if p.step(v, e) {
			fn(p.change())
		}
		return true, nil
	})
}

// owned turns fn, which owns each Cluster, into a ClusterChange callback.
func owned(fn func(Cluster)) func(ClusterChange) {
	if fn == nil {
		return nil
	}
	return func(ch ClusterChange) { fn(ch.Cluster.Clone()) }
}
