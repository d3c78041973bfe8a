package partition

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap one of them, so test
// them with errors.Is.
var (
	// ErrInvalidConfig reports a Config field that breaks its rule; the
	// error is a *ConfigError naming the field.
	ErrInvalidConfig = errors.New("partition: invalid config")
	// ErrInvalidShardID reports a shard id that cannot be a znode name; the
	// error is a *ShardIDError.
	ErrInvalidShardID = errors.New("partition: invalid shard id")
	// ErrDuplicateShard reports a shard id listed twice.
	ErrDuplicateShard = errors.New("partition: duplicate shard id")
	// ErrDuplicateMember reports that another live session (or another
	// Manager on the same session) already registered this member id under
	// <root>/members. Two processes must not
	// share a member id; a member restarted before its old session expired
	// waits for the old session's znode to go (Run) before it gets this
	// error.
	ErrDuplicateMember = errors.New("partition: member id already registered by another live session")
	// ErrNilSession reports a nil *recipe.Session.
	ErrNilSession = errors.New("partition: nil session")
	// ErrInvalidRoot reports a root path that is not an absolute znode path.
	ErrInvalidRoot = errors.New("partition: invalid root path")
	// ErrPruneRefused reports that Prune found a live member that may run
	// the shards it was asked to remove (see Prune); the error names it.
	ErrPruneRefused = errors.New("partition: prune refused")
	// ErrAlreadyRunning reports a second call of Run on one Manager.
	ErrAlreadyRunning = errors.New("partition: manager already running")
	// ErrOverLimit reports a configuration whose numbers would exceed one
	// of ZooKeeper's size limits (see MaxShardsPerSession and
	// JuteMaxBuffer); the error is a *LimitError inside a *ConfigError.
	ErrOverLimit = errors.New("partition: over ZooKeeper's size limit")

	// ErrHandoff is the reason given to OnStoppedLeading when a leadership
	// is handed over to another member to balance the shards.
	ErrHandoff = errors.New("partition: handed off for balance")
	// ErrWithdrawn is the reason given to OnStoppedLeading when a
	// candidate won just as the assignment moved its shard to another
	// member (after the runner last read the assignment, before the member
	// saw it lead): OnStartedLeading ran, and like a handoff the
	// leadership ends only once the new target's candidate waits in the
	// election. If none waits yet it goes on, and ends later with
	// ErrHandoff. A candidate withdrawn before it won ends without any
	// callback.
	ErrWithdrawn = errors.New("partition: withdrawn, shard assigned elsewhere")
	// ErrShardRemoved is the reason given to OnStoppedLeading when SetShards
	// removed the shard.
	ErrShardRemoved = errors.New("partition: shard removed")
	// ErrStopping is the reason given to OnStoppedLeading when Run's context
	// ended and the manager resigns everything.
	ErrStopping = errors.New("partition: manager stopping")
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

// ShardIDError reports a shard (or member) id that is not a valid znode name.
// It matches ErrInvalidShardID with errors.Is.
type ShardIDError struct {
	ID     string // the offending id (may be long or hold control characters)
	Reason string // the rule it breaks
}

// Error implements error.
func (e *ShardIDError) Error() string {
	id := e.ID
	if len(id) > 40 {
		id = id[:40] + "…"
	}
	return fmt.Sprintf("partition: invalid shard or member id %q: %s", id, e.Reason)
}

// Is reports whether target is ErrInvalidShardID.
func (e *ShardIDError) Is(target error) bool { return target == ErrInvalidShardID }

// LimitError reports that a configuration would make ZooKeeper write or
// send more bytes than its limit (jute.maxbuffer, Config.JuteMaxBuffer):
// a session's closeSession transaction or the listing of <root>/shards.
// It matches ErrOverLimit with errors.Is.
type LimitError struct {
	Limit  string // "closeSession" (ephemerals of one session) or "getChildren" (<root>/shards)
	Bytes  int    // the size the configuration would produce, in bytes
	Max    int    // the limit, in bytes
	Reason string // what produces the size, and what would fit
}

// Error implements error.
func (e *LimitError) Error() string {
	return fmt.Sprintf("partition: %s of %d bytes would exceed jute.maxbuffer (%d bytes): %s", e.Limit, e.Bytes, e.Max, e.Reason)
}

// Is reports whether target is ErrOverLimit.
func (e *LimitError) Is(target error) bool { return target == ErrOverLimit }
