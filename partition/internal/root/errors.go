package root

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// Sentinel errors about the root's data, exported by package partition
// under the same names (their text keeps its "partition:" prefix).
var (
	// ErrNilSession reports a nil *recipe.Session.
	ErrNilSession = errors.New("partition: nil session")
	// ErrInvalidShardID reports a shard id that cannot be a znode name; the
	// error is a *ShardIDError.
	ErrInvalidShardID = errors.New("partition: invalid shard id")
	// ErrDuplicateShard reports a shard id listed twice.
	ErrDuplicateShard = errors.New("partition: duplicate shard id")
	// ErrInvalidRoot reports a root path that is not an absolute znode path.
	ErrInvalidRoot = errors.New("partition: invalid root path")
	// ErrOverLimit reports a configuration whose numbers would exceed one
	// of ZooKeeper's size limits (see MaxShardsPerSession and
	// JuteMaxBuffer); the error is a *LimitError inside a *ConfigError.
	ErrOverLimit = errors.New("partition: over ZooKeeper's size limit")
	// ErrDuplicateMember reports that another live session (or another
	// Manager on the same session) already registered this member id
	// under <root>/members (Register).
	ErrDuplicateMember = errors.New("partition: member id already registered by another live session")
	// ErrOverBound reports a znode of a root that its reader refuses for
	// its size (see Bounds); the error is a *BoundError.
	ErrOverBound = errors.New("partition: over the reader's bound")
)

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

// ACLDenied marks err with recipe.ErrACLDenied, as recipe marks its own,
// when ZooKeeper refused the request for lack of permission, naming the
// likely cause; err stays in the chain.
func ACLDenied(err error) error {
	switch {
	case errors.Is(err, zk.ErrNoAuth):
		return fmt.Errorf("%w (the root's ACL does not grant this session's identity; does the member have the group's credentials?): %w",
			recipe.ErrACLDenied, err)
	case errors.Is(err, zk.ErrInvalidACL):
		return fmt.Errorf("%w (Config.ACL names the creator's identity but this session has no credentials): %w",
			recipe.ErrACLDenied, err)
	}
	return err
}

// Unreachable reports whether err means ZooKeeper could not be asked or
// asked for a retry (recipe.Retryable: connection loss, throttled, session
// moved, ...) or the session is being replaced, as opposed to having
// answered no. zk.ErrConnectionClosed is also what a
// closed session's requests fail with: callers check the session first.
func Unreachable(err error) bool {
	return recipe.Retryable(err) || errors.Is(err, zk.ErrSessionExpired)
}
