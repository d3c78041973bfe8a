// Package operator is the admin plane of a partition group: it changes the
// operator state of a root (<root>/operator), which every member follows
// and feeds into its assignment, and waits for the members to act on it.
// Its verbs are those of Apache Helix's EVACUATE and maintenance mode and
// of Kafka's preferred-leader election: Drain and Undrain a member, Freeze
// and Unfreeze rebalancing, Pin and Unpin a shard to a member, Move a shard
// once, SetWeight and ResetWeight; WaitDrained
// and WaitMoved follow the members' records until a change took effect;
// Prune deletes the elections of shards no member runs any more. Every
// verb is one version-checked write of the whole state, idempotent, and
// reports whether it changed anything.
//
// The state is the data of one znode, protected by its ACL (New's acl).
// The daemon's CLI drives this package: `zkelect shards drain|undrain|
// freeze|unfreeze|pin|unpin|move|weight|prune`.
package operator

import (
	"errors"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// State is what operators decided for a root (the data of <root>/operator);
// partition.OperatorState is the same type.
type State = rootdata.OperatorState

// Note says when and why an operator changed something.
type Note = rootdata.Note

// Freeze is the maintenance mode of a root.
type Freeze = rootdata.Freeze

// MaxWeight caps a member's weight (SetWeight, partition.Config.Weight).
const MaxWeight = rootdata.MaxWeight

// Sentinel errors; partition exports the same values under the same names.
var (
	// ErrRefused reports an operator change that cannot hold (draining the
	// last live member, pinning to a member that is not live or runs
	// another shard list, a weight out of range). Nothing was written.
	ErrRefused = errors.New("partition: operator change refused")
	// ErrPruneRefused reports that Prune found a live member that may run
	// the shards it was asked to remove (see Prune); the error names it.
	ErrPruneRefused = errors.New("partition: prune refused")
	// ErrNilSession reports a nil *recipe.Session.
	ErrNilSession = rootdata.ErrNilSession
	// ErrInvalidRoot reports a root path that is not an absolute znode path.
	ErrInvalidRoot = rootdata.ErrInvalidRoot
	// ErrInvalidShardID reports a shard or member id that cannot be a znode
	// name.
	ErrInvalidShardID = rootdata.ErrInvalidShardID
	// ErrDuplicateShard reports a shard id listed twice.
	ErrDuplicateShard = rootdata.ErrDuplicateShard
)
