package partition

import (
	"context"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// This file keeps members of releases before buckets out of a bucketed
// root's assignment: such a member campaigns at <root>/shards/<id>, which
// a bucketed root refuses (see partition/internal/root/shardslock.go), so
// a shard dealt to it would stay without a leader.

// shardsLocked reports whether the root is bucketed and its <root>/shards
// grants nobody more than READ, as this release creates it: recipe.CheckACL
// would refuse such a znode (it grants this member no change), and nothing
// of this release creates anything under it. A read error is false: the
// caller's own check then reads it and reports.
func (m *Manager) shardsLocked(ctx context.Context) bool {
	if !m.rootLayout().Bucketed() { // a release before buckets reads any root as flat (prepareOnce)
		return false
	}
	acl, _, err := m.sess.GetACL(ctx, rootdata.ShardsPath(m.root))
	return err == nil && rootdata.ShardsLocked(acl)
}

// campaignsFlat reports whether r, the record of a live member, is one of
// a release before buckets while the root is bucketed: its elections are
// not the root's, and it is dealt no shard.
func (m *Manager) campaignsFlat(r record) bool {
	return !r.Buckets && m.rootLayout().Bucketed()
}
