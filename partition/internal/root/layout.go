// Package root is the data a partition group keeps under its root znode:
// the layout of the znodes (layout.go), the codecs of a member's record and
// of the operator state, shard and member ids, the bounds that keep every
// request and listing within ZooKeeper's jute.maxbuffer, and the observed
// state of a root (View) with the watchers that feed it (Watcher, Follow),
// which read ZooKeeper through a recipe.Session. It knows nothing of the
// member's loop or the Manager; packages partition and partition/operator
// read and write the root through it.
package root

// The root's children:
//
//	<root>/members/<member>  ephemeral, one per live member (its session)
//	<root>/owners/<member>   persistent, the member's Record
//	<root>/shards/<shard>    persistent, the parent of the shard's election
//	<root>/operator          persistent, the OperatorState (OperatorNode)
const (
	// MembersDir holds one ephemeral znode per live member.
	MembersDir = "members"
	// OwnersDir holds one record per member (Record).
	OwnersDir = "owners"
	// ShardsDir holds one election parent per shard.
	ShardsDir = "shards"
)
