package partition

import (
	"errors"
	"fmt"
	"github.com/zkelect/zkelect/partition/internal/shard"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// Sentinel errors. Errors returned by this package wrap one of them, so test
// them with errors.Is.
var (
	// ErrInvalidConfig reports a Config field that breaks its rule; the
	// error is a *ConfigError naming the field.
	ErrInvalidConfig = errors.New("partition: invalid config")
	// ErrDuplicateMember reports that another live session (or another
	// Manager on the same session) already registered this member id under
	// <root>/members. Two processes must not
	// share a member id; a member restarted before its old session expired
	// waits for the old session's znode to go (Run) before it gets this
	// error.
	ErrDuplicateMember = rootdata.ErrDuplicateMember
	// ErrInvalidShardID reports a shard id that cannot be a znode name; the
	// error is a *ShardIDError.
	ErrInvalidShardID = rootdata.ErrInvalidShardID
	// ErrDuplicateShard reports a shard id listed twice.
	ErrDuplicateShard = rootdata.ErrDuplicateShard
	// ErrInvalidRoot reports a root path that is not an absolute znode path.
	ErrInvalidRoot = rootdata.ErrInvalidRoot
	// ErrOverLimit reports a configuration whose numbers would exceed one
	// of ZooKeeper's size limits (see MaxShardsPerSession and
	// JuteMaxBuffer); the error is a *LimitError inside a *ConfigError.
	ErrOverLimit = rootdata.ErrOverLimit
	// ErrNilSession reports a nil *recipe.Session.
	ErrNilSession = rootdata.ErrNilSession
	// ErrUnknownLayout reports a root whose <root>/shards records a shard
	// layout this release cannot read (a later release's, or damaged
	// data): Run, Owners and the operator verbs refuse to guess it.
	ErrUnknownLayout = rootdata.ErrUnknownLayout
	// ErrAlreadyRunning reports a second call of Run on one Manager.
	ErrAlreadyRunning = errors.New("partition: manager already running")

	// ErrHandoff is the reason given to OnStoppedLeading when a leadership
	// is handed over to another member to balance the shards.
	ErrHandoff = shard.ErrHandoff
	// ErrWithdrawn is the reason given to OnStoppedLeading when a
	// candidate won just as the assignment moved its shard to another
	// member (after the runner last read the assignment, before the member
	// saw it lead): OnStartedLeading ran, and like a handoff the
	// leadership ends only once the new target's candidate waits in the
	// election (waiting for it at most Config.HandoffTimeout). If none
	// comes it goes on, and ends later with ErrHandoff. A candidate
	// withdrawn before it won ends without any callback.
	ErrWithdrawn = shard.ErrWithdrawn
	// ErrShardRemoved is the reason given to OnStoppedLeading when SetShards
	// removed the shard.
	ErrShardRemoved = shard.ErrShardRemoved
	// ErrStopping is the reason given to OnStoppedLeading when Run's context
	// ended and the manager resigns everything.
	ErrStopping = shard.ErrStopping
)

// ConfigError reports which Config field is invalid and why. It matches
// ErrInvalidConfig with errors.Is.
type ConfigError struct {
	Field  string // the Config field, e.g. "HandoffTimeout"
	Reason string // the rule it breaks
	Err    error  // optional underlying error, e.g. a *ShardIDError
}

// Error implements error.
func (e *ConfigError) Error() string {
	msg := fmt.Sprintf("partition: invalid config: %s %s", e.Field, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is ErrInvalidConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the underlying error, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// ShardIDError reports a shard (or member) id that is not a valid znode
// name: the id and the rule it breaks. It matches ErrInvalidShardID with
// errors.Is.
type ShardIDError = rootdata.ShardIDError

// LimitError reports that a configuration would make ZooKeeper write or
// send more bytes than its limit (jute.maxbuffer, Config.JuteMaxBuffer):
// a session's closeSession transaction or the listing of <root>/shards.
// It matches ErrOverLimit with errors.Is.
type LimitError = rootdata.LimitError
