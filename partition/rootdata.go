package partition

import (
	"context"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// The root's data (its layout, codecs, ids and bounds) lives in package
// partition/internal/root, which users cannot import. The names below are
// partition's API for it (the ids and bounds a Config is checked against,
// LiveMembers for readiness checks and tools). The package's own files
// name rootdata's directly.

// MaxIDLength is the longest shard or member id accepted, in bytes (see
// ValidateID).
const MaxIDLength = rootdata.MaxIDLength

const (
	// DefaultJuteMaxBuffer is ZooKeeper's default jute.maxbuffer, in
	// bytes (0xfffff): the largest request or znode a server accepts, and
	// the largest reply a Java client reads.
	DefaultJuteMaxBuffer = rootdata.DefaultJuteMaxBuffer
	// DefaultMaxShardsPerSession is how many shard elections one session
	// carries at most, by default (Config.MaxShardsPerSession).
	DefaultMaxShardsPerSession = rootdata.DefaultMaxShardsPerSession
)

// Range returns the shard ids "lo", "lo+1", …, "hi-1" in decimal, e.g.
// Range(0, 3) is ["0" "1" "2"]. It returns nil when hi <= lo.
func Range(lo, hi int) []string { return rootdata.Range(lo, hi) }

// ValidateID returns a *ShardIDError if id cannot be used as a shard or
// member id: empty, "." or "..", longer than MaxIDLength bytes, not UTF-8,
// or containing '/' or a character ZooKeeper refuses in a path (control
// characters, U+D800–U+F8FF, U+FFF0 and above).
func ValidateID(id string) error { return rootdata.ValidateID(id) }

// CloseSessionBytes returns the size, in bytes, of the closeSession
// transaction of a session that owns the given number of ephemeral znodes
// whose paths are pathBytes long (see Config.MaxShardsPerSession).
// Compare it with the servers' jute.maxbuffer.
func CloseSessionBytes(ephemerals, pathBytes int) int {
	return rootdata.CloseSessionBytes(ephemerals, pathBytes)
}

// ListingBytes returns the size, in bytes, of the getChildren reply that
// lists ids (as zkelect status, Owners and WatchLeaders list
// <root>/shards). Compare it with the clients' jute.maxbuffer.
func ListingBytes(ids []string) int { return rootdata.ListingBytes(ids) }

// LiveMembers returns the members registered under root now, each with the
// id of the session that registered it: the ephemeral children of
// <root>/members (a persistent child belongs to no session and is not a
// member). ctx is checked between reads. A root without members gives an
// empty map. Errors: ErrNilSession, an error wrapping ErrInvalidRoot,
// ctx's error, or ZooKeeper's wrapped with the path.
func LiveMembers(ctx context.Context, sess *recipe.Session, root string) (map[string]int64, error) {
	return rootdata.LiveMembers(ctx, sess, root)
}
