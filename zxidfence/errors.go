package zxidfence

import (
	"errors"
	"fmt"
)

// Sentinel errors. Guards wrap them with the resource key; test with errors.Is.
var (
	// ErrStaleToken reports a write refused because its fence is lower than
	// the highest the guard has accepted for the resource. The error is a
	// *StaleTokenError naming both fences.
	ErrStaleToken = errors.New("zxidfence: stale token")

	// ErrNoToken reports a write presented without a token (NoToken). Guards
	// never accept it: a writer that has no token is not a leader.
	ErrNoToken = errors.New("zxidfence: no token")

	// ErrUnknownGeneration reports a write whose generation is higher than
	// the one the guard has accepted for the resource: it comes from a
	// rebuilt ZooKeeper ensemble that an operator has not yet admitted with
	// AcceptGeneration. The error is a *GenerationError.
	ErrUnknownGeneration = errors.New("zxidfence: generation not accepted")

	// ErrGenerationNotNewer reports an AcceptGeneration call whose generation
	// is not higher than the resource's current one; generations never go
	// back.
	ErrGenerationNotNewer = errors.New("zxidfence: generation not newer than current")

	// ErrNotLeader reports a ZooKeeper write refused inside ZooKeeper because
	// the writer's election znode is gone or its version changed: the writer
	// is no longer the leader it believes it is.
	ErrNotLeader = errors.New("zxidfence: election znode gone or changed (not leader)")

	// ErrInvalidKey reports an empty resource key (or, for ZooKeeper, an
	// invalid znode path).
	ErrInvalidKey = errors.New("zxidfence: invalid resource key")

	// ErrOutOfRange reports a token or generation at or above 2^63, which
	// does not fit the SQL guard's signed BIGINT columns. ZooKeeper zxids are
	// far below it.
	ErrOutOfRange = errors.New("zxidfence: token or generation does not fit a signed 64-bit column")

	// ErrNotFenced reports a ZooKeeper target znode whose data does not start
	// with this package's header: it was written by something else, and the
	// guard refuses to overwrite it.
	ErrNotFenced = errors.New("zxidfence: target znode is not fenced by zxidfence")

	// ErrTooManyKeys reports a write to a new key refused because a Memory
	// guard already holds the number of keys set with WithMaxKeys. Behind
	// Middleware it is answered with 503 and reason "too_many_keys".
	ErrTooManyKeys = errors.New("zxidfence: too many keys")
)

// StaleTokenError is the rejection of a write whose fence is lower than the
// highest accepted for the resource. errors.Is(err, ErrStaleToken) is true.
type StaleTokenError struct {
	// Key is the resource key (for ZooKeeper, the target znode path).
	Key string
	// Presented is the fence the writer presented.
	Presented Fence
	// Highest is the highest fence the guard had accepted for Key when it
	// refused the write; it is higher than Presented.
	Highest Fence
}

// Error names the resource and both fences.
func (e *StaleTokenError) Error() string {
	return fmt.Sprintf("zxidfence: stale token for %q: presented %s, highest accepted %s",
		e.Key, e.Presented, e.Highest)
}

// Is reports whether target is ErrStaleToken.
func (e *StaleTokenError) Is(target error) bool { return target == ErrStaleToken }

// GenerationError is the rejection of a write whose generation is higher
// than the one accepted for the resource. errors.Is(err,
// ErrUnknownGeneration) is true. An operator admits the new generation with
// the guard's AcceptGeneration.
type GenerationError struct {
	// Key is the resource key.
	Key string
	// Presented is the fence the writer presented.
	Presented Fence
	// Current is the highest fence accepted for Key, in the older generation.
	Current Fence
}

// Error names the resource, both generations and what to do.
func (e *GenerationError) Error() string {
	return fmt.Sprintf("zxidfence: generation %d for %q not accepted (current generation %d, highest %s); "+
		"an operator must accept it explicitly (AcceptGeneration)",
		e.Presented.Generation, e.Key, e.Current.Generation, e.Current)
}

// Is reports whether target is ErrUnknownGeneration.
func (e *GenerationError) Is(target error) bool { return target == ErrUnknownGeneration }
