package zxidfence

import "context"

// Guard is a resource-side fence: per resource key it remembers the highest
// Fence it has accepted and admits a write only if the write's fence is not
// lower, atomically with the write. Memory and SQL implement it; the HTTP
// middleware runs handlers through one. (The ZooKeeper guard writes znodes
// inside a ZooKeeper multi instead and has its own methods.)
//
// Keys are independent: a fence accepted for one key has no effect on any
// other. A guard never lowers a key's fence, except to move it to a higher
// generation through AcceptGeneration.
type Guard interface {
	// Do admits a write to key under fence f and then runs fn, holding the
	// key exclusively until fn returns, so no other Do for the key
	// interleaves with it. fn may be nil (record only). Do blocks while
	// another Do holds the key, until ctx ends. If fn fails, Memory keeps the
	// fence it recorded before running fn, while SQL rolls the fence back
	// with fn's transaction; either way no lower fence is admitted later.
	//
	// Errors: wrapping ErrNoToken for NoToken, *StaleTokenError
	// (ErrStaleToken) for a fence lower than the highest accepted,
	// *GenerationError (ErrUnknownGeneration) for a generation not yet
	// accepted, ErrInvalidKey for an empty key, ctx's error, or fn's error
	// as returned.
	Do(ctx context.Context, key string, f Fence, fn func(ctx context.Context) error) error

	// Highest returns the highest fence accepted for key, or the zero Fence
	// if none.
	Highest(ctx context.Context, key string) (Fence, error)

	// AcceptGeneration moves key to generation gen, which must be higher than
	// its current one (else ErrGenerationNotNewer), so that writers from a
	// rebuilt ZooKeeper ensemble are accepted from their first token on and
	// writers from the old generation are refused. reason is logged with the
	// change, which is also counted in metrics. It returns the fence the key
	// held before.
	AcceptGeneration(ctx context.Context, key string, gen uint64, reason string) (previous Fence, err error)
}
