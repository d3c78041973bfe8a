// Package operator is the admin plane of a partition group: it changes the
// operator state of a root (<root>/operator), which every member follows
// and feeds into its assignment, and waits for the members to act on it.
// Its verbs are those of Apache Helix's EVACUATE and maintenance mode and
// of Kafka's preferred-leader election: Drain and Undrain a member, Freeze
// and Unfreeze rebalancing, Pin and Unpin a shard to a member, Move a shard
// once (and Unmove to cancel it), SetWeight and ResetWeight; WaitDrained
// and WaitMoved follow the members' records until a change took effect;
// Prune deletes the elections of shards no member runs any more. Every
// verb is one version-checked write of the whole state, idempotent, and
// reports whether it changed anything.
//
// How the verbs compose on one shard (every member computes the outcome
// from the state with package partition/assign; the table test
// TestOperatorVerbsComposeOnOneShard in partition/internal/root checks
// every combination of the five):
//
//  1. A pin to a live member that is not drained holds the shard there,
//     while frozen too; a pin to a member that is not live or is drained
//     is ignored (and kept, for when it comes back).
//  2. Else a move to a live member that is not drained takes the shard
//     there, while frozen too, until its member leads it and clears it.
//     A move is void when its member is not live or is drained, or when
//     the shard is pinned to another member: members ignore it and the
//     lowest live member clears it, so it never holds the shard on its
//     member again later. Pin and Unpin of a shard clear its move (the
//     latest word wins); Unmove cancels it; WaitMoved refuses a member that
//     is not live or is drained.
//  3. Else the balance decides: the holder keeps the shard within its
//     share (its weight's), always while frozen; a drained holder hands
//     it to a member that is not drained. A pinned shard counts against
//     its member's share.
//
// Drains are ignored when every live member is drained (availability
// first), and then so is their effect on pins and moves.
//
// The state is the data of one znode, protected by its ACL (New's acl).
// The daemon's CLI drives this package: `zkelect shards drain|undrain|
// freeze|unfreeze|pin|unpin|move|unmove|weight|prune`.
package operator

import (
	"errors"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// State is what operators decided for a root (the data of <root>/operator;
// partition.Cluster.Operator).
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
