package partition

import (
	"context"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// This file gives the member's bounds on what it reads from its root
// (rootdata.Bounds, partition/README.md "Bounds"): derived from its shard
// list, replaced by SetShards.

// bounds returns the bounds of the member's shard list now.
func (m *Manager) bounds() *rootdata.Bounds { return m.readBounds.Load() }

// WatchCluster is the package's WatchCluster as this member reads its
// root (m's session and root): within the bounds of its shard list (the
// one SetShards last gave), so a record larger than the list allows is
// refused, and claims of shards outside the list are ignored. Routers and
// the daemon's /v1/owners (package zkelecthttp) that run beside a member
// follow the root this way. Errors as WatchCluster's.
func (m *Manager) WatchCluster(ctx context.Context, fn func(Cluster)) error {
	return watchCluster(ctx, m.sess, m.root, m.bounds, fn)
}
