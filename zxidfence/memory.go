package zxidfence

import (
	"context"
	"fmt"
	"sync"
)

// Memory is an in-process Guard for resources that live in the same
// process's memory: safe for concurrent use, any number of keys, one lock
// per key (a small entry per key ever seen, kept for the Memory's life:
// forgetting a key would forget its fence). Its fences live as long as the
// Memory value; a resource that
// survives a restart of the process needs a guard that does too (SQL,
// ZooKeeper).
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

// NewMemory returns an empty in-memory guard. It accepts WithMetrics and
// WithLogger.
func NewMemory(opts ...Option) *Memory {
	return &Memory{cfg: newConfig(opts), keys: make(map[string]*memEntry)}
}

// Do implements Guard. fn runs while the key's lock is held.
func (m *Memory) Do(ctx context.Context, key string, f Fence, fn func(ctx context.Context) error) error {
	e, err := m.acquire(ctx, key)
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

// Highest implements Guard.
func (m *Memory) Highest(ctx context.Context, key string) (Fence, error) {
	e, err := m.acquire(ctx, key)
	if err != nil {
		return Fence{}, err
	}
	defer e.release()
	return e.fence, nil
}

// AcceptGeneration implements Guard.
func (m *Memory) AcceptGeneration(ctx context.Context, key string, gen uint64, reason string) (Fence, error) {
	e, err := m.acquire(ctx, key)
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

// acquire returns key's entry with its lock held, creating the entry on
// first use, or ctx's error if ctx ends while another holder keeps it.
func (m *Memory) acquire(ctx context.Context, key string) (*memEntry, error) {
	if key == "" {
		return nil, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	e, ok := m.keys[key]
	if !ok {
		e = &memEntry{lock: make(chan struct{}, 1)}
		m.keys[key] = e
	}
	m.mu.Unlock()
	select {
	case e.lock <- struct{}{}:
		return e, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (e *memEntry) release() { <-e.lock }
