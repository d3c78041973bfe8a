package zxidfence

import (
	"context"
	"fmt"
	"sync"
)

// Memory is an in-process Guard for resources that live in the same
// process's memory: safe for concurrent use, one lock per key. Its fences
// live as long as the Memory value; a resource that survives a restart of
// the process needs a guard that does too (SQL, ZooKeeper).
//
// Memory grows with its keys: it keeps an entry (the key plus about 100
// bytes) for every key it has ever admitted a write or a generation for,
// for its whole life, since forgetting a key would forget its fence and
// admit a stale writer. Use it for a bounded set of keys (shard ids,
// account ids you own). When keys come from clients, as behind Middleware
// with a key func that returns the URL path, any client can add keys: check
// them in the key func, or bound the guard with WithMaxKeys, past which a
// write to a new key fails with ErrTooManyKeys (existing keys keep working).
type Memory struct {
	cfg config

	mu   sync.Mutex
	keys map[string]*memEntry
}

// memEntry is one key: a lock that waits with a context (a one-slot
// channel) and the highest fence accepted, read and written only by the
// lock's holder.
type memEntry struct {
	lock  chan struct{}
	fence Fence
}

var _ Guard = (*Memory)(nil)

// NewMemory returns an empty in-memory guard. It accepts WithMaxKeys,
// WithMetrics and WithLogger.
func NewMemory(opts ...Option) *Memory {
	return &Memory{cfg: newConfig(opts), keys: make(map[string]*memEntry)}
}

// Do implements Guard. fn runs while the key's lock is held. A write to a
// new key past the WithMaxKeys bound fails with an error wrapping
// ErrTooManyKeys.
func (m *Memory) Do(ctx context.Context, key string, f Fence, fn func(ctx context.Context) error) error {
	e, err := m.acquire(ctx, key, true)
	if err != nil {
		return err
	}
	defer e.release()
	err = admit(key, e.fence, f)
	m.cfg.metrics.observe(KindMemory, key, f, err)
	if err != nil {
		logRejection(m.cfg.logger, KindMemory, err)
		return err
	}
	e.fence = f
	if fn == nil {
		return nil
	}
	return fn(ctx)
}

// Highest implements Guard. It adds no entry for a key never written.
func (m *Memory) Highest(ctx context.Context, key string) (Fence, error) {
	e, err := m.acquire(ctx, key, false)
	if err != nil || e == nil {
		return Fence{}, err
	}
	defer e.release()
	return e.fence, nil
}

// AcceptGeneration implements Guard. For a new key past the WithMaxKeys
// bound it fails with an error wrapping ErrTooManyKeys.
func (m *Memory) AcceptGeneration(ctx context.Context, key string, gen uint64, reason string) (Fence, error) {
	e, err := m.acquire(ctx, key, true)
	if err != nil {
		return Fence{}, err
	}
	defer e.release()
	prev := e.fence
	next, err := nextGeneration(key, prev, gen)
	if err != nil {
		return prev, err
	}
	e.fence = next
	logGeneration(m.cfg.logger, KindMemory, key, prev, next, reason)
	m.cfg.metrics.generationChanged(KindMemory, key, next)
	return prev, nil
}

// acquire returns key's entry with its lock held, or ctx's error if ctx
// ends while another holder keeps it. A missing entry is created if create
// is set (within the WithMaxKeys bound), else acquire returns nil.
func (m *Memory) acquire(ctx context.Context, key string, create bool) (*memEntry, error) {
	if key == "" {
		return nil, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := m.entry(key, create)
	if e == nil || err != nil {
		return nil, err
	}
	select {
	case e.lock <- struct{}{}:
		return e, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// entry returns key's entry, creating it if create is set and the guard
// holds fewer than its maximum number of keys.
func (m *Memory) entry(key string, create bool) (*memEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.keys[key]; ok || !create {
		return e, nil
	}
	if limit := m.cfg.maxKeys; limit > 0 && len(m.keys) >= limit {
		return nil, fmt.Errorf("%w: %q would be key %d of at most %d", ErrTooManyKeys, key, len(m.keys)+1, limit)
	}
	e := &memEntry{lock: make(chan struct{}, 1)}
	m.keys[key] = e
	return e, nil
}

func (e *memEntry) release() { <-e.lock }
