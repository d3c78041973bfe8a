package zkconn

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"
)

// TestResolverStartsNoLookupAfterClose: a dial that go-zookeeper still
// runs after the connection was abandoned (conn.go) reaches the resolver
// after close began; it fails with errResolverClosed and starts no lookup,
// so no running.Add follows close's Wait (a WaitGroup misuse that can
// panic). Dials racing with close, under -race, neither panic nor leave a
// lookup running. Before, the dial after close started a lookup.
func TestResolverStartsNoLookupAfterClose(t *testing.T) {
	var lookups atomic.Int64
	r := newResolver(t.Context(), func() bool { return true }, nil, nil, nil, zerolog.Nop())
	r.hosts = t.TempDir() + "/no-hosts"
	r.lookup = func(ctx context.Context, host string) ([]string, error) {
		lookups.Add(1)
		<-ctx.Done() // a resolver that answers only when stopped
		return nil, ctx.Err()
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { _, _ = r.resolve("zk.test:2181", "zk.test", cachedWait) })
	}
	r.close()
	wg.Wait()
	before := lookups.Load()
	_, err := r.resolve("zk.test:2181", "zk.test", cachedWait)
	if !errors.Is(err, errResolverClosed) {
		t.Fatalf("resolve after close: %v; want errResolverClosed", err)
	}
	if n := lookups.Load(); n != before {
		t.Fatalf("resolve after close started a lookup (%d, was %d)", n, before)
	}
	r.close() // idempotent
}
