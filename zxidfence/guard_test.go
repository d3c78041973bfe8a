package zxidfence_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zkelect/zkelect/zxidfence"
)

// guards returns one fresh guard of every kind, the ZooKeeper guard through
// an adapter to the Guard interface.
func guards(t testing.TB, opts ...zxidfence.Option) map[string]zxidfence.Guard {
	m := map[string]zxidfence.Guard{"memory": zxidfence.NewMemory(opts...), "zookeeper": newZKGuard(t)}
	for name, g := range sqlGuards(t, opts...) {
		m[name] = g
	}
	return m
}

type step struct {
	name string
	key  string
	f    zxidfence.Fence
	want error // nil, or the sentinel errors.Is must match
}

func gen(g uint64, tok zxidfence.Token) zxidfence.Fence {
	return zxidfence.Fence{Generation: g, Token: tok}
}

func TestGuardAdmitsOnlyFencesNotLowerPerKey(t *testing.T) {
	steps := []step{
		{"no token is never accepted", "a", zxidfence.At(0), zxidfence.ErrNoToken},
		{"empty key", "", zxidfence.At(5), zxidfence.ErrInvalidKey},
		{"first write", "a", zxidfence.At(5), nil},
		{"equal token, same leader again", "a", zxidfence.At(5), nil},
		{"lower token is stale", "a", zxidfence.At(4), zxidfence.ErrStaleToken},
		{"higher token", "a", zxidfence.At(0x100000001), nil},
		{"previous highest now stale", "a", zxidfence.At(5), zxidfence.ErrStaleToken},
		{"other key is independent", "b", zxidfence.At(1), nil},
		{"unaccepted generation", "a", gen(1, 1), zxidfence.ErrUnknownGeneration},
		{"still at generation 0", "a", zxidfence.At(0x100000001), nil},
	}
	for name, g := range guards(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			for _, s := range steps {
				err := g.Do(ctx, s.key, s.f, nil)
				if !errors.Is(err, s.want) || (s.want == nil) != (err == nil) {
					t.Fatalf("%s: Do(%q, %s) = %v; want %v", s.name, s.key, s.f, err, s.want)
				}
			}
			expectHighest(ctx, t, g, "a", zxidfence.At(0x100000001))
			expectHighest(ctx, t, g, "b", zxidfence.At(1))
			expectHighest(ctx, t, g, "never-written", zxidfence.Fence{})
		})
	}
}

func TestStaleRejectionNamesBothFences(t *testing.T) {
	for name, g := range guards(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			if err := g.Do(ctx, "shard-7", zxidfence.At(9), nil); err != nil {
				t.Fatal(err)
			}
			err := g.Do(ctx, "shard-7", zxidfence.At(3), nil)
			var stale *zxidfence.StaleTokenError
			if !errors.As(err, &stale) {
				t.Fatalf("Do with a lower token = %v; want *StaleTokenError", err)
			}
			// The ZooKeeper guard's key is the znode path ending in the key.
			if !strings.HasSuffix(stale.Key, "shard-7") || stale.Presented != zxidfence.At(3) || stale.Highest != zxidfence.At(9) {
				t.Fatalf("rejection = %+v; want key shard-7, presented 3, highest 9", *stale)
			}
		})
	}
}

func TestAcceptGenerationIsTheOnlyWayPastARebuiltEnsemble(t *testing.T) {
	for name, g := range guards(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			oldLeader := zxidfence.At(zxidfence.NewToken(7, 100))
			newLeader := gen(1, zxidfence.NewToken(1, 3)) // the rebuilt ensemble restarts low
			mustDo(ctx, t, g, "k", oldLeader)
			if err := g.Do(ctx, "k", newLeader, nil); !errors.Is(err, zxidfence.ErrUnknownGeneration) {
				t.Fatalf("new generation before it is accepted: %v; want ErrUnknownGeneration", err)
			}
			if _, err := g.AcceptGeneration(ctx, "k", 0, "same"); !errors.Is(err, zxidfence.ErrGenerationNotNewer) {
				t.Fatalf("AcceptGeneration(0) = %v; want ErrGenerationNotNewer", err)
			}
			prev, err := g.AcceptGeneration(ctx, "k", 1, "ensemble rebuilt after disk loss (TICKET-1)")
			if err != nil || prev != oldLeader {
				t.Fatalf("AcceptGeneration(1) = %v, %v; want previous %v", prev, err, oldLeader)
			}
			mustDo(ctx, t, g, "k", newLeader)
			if err := g.Do(ctx, "k", oldLeader, nil); !errors.Is(err, zxidfence.ErrStaleToken) {
				t.Fatalf("old generation's leader after the change: %v; want ErrStaleToken", err)
			}
			if _, err := g.AcceptGeneration(ctx, "k", 1, "again"); !errors.Is(err, zxidfence.ErrGenerationNotNewer) {
				t.Fatalf("accepting the current generation again = %v; want ErrGenerationNotNewer", err)
			}
			expectHighest(ctx, t, g, "k", newLeader)
			if _, err := g.AcceptGeneration(ctx, "fresh", 3, "new key"); err != nil {
				t.Fatal(err)
			}
			if err := g.Do(ctx, "fresh", gen(2, 99), nil); !errors.Is(err, zxidfence.ErrStaleToken) {
				t.Fatalf("a lower generation on a key moved to 3: %v; want ErrStaleToken", err)
			}
		})
	}
}

func TestDoRunsFnOnlyWhenAdmitted(t *testing.T) {
	for name, g := range guards(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			ran := 0
			fn := func(context.Context) error { ran++; return nil }
			mustDo(ctx, t, g, "k", zxidfence.At(10))
			if err := g.Do(ctx, "k", zxidfence.At(9), fn); err == nil || ran != 0 {
				t.Fatalf("stale Do ran fn (%d times), err %v", ran, err)
			}
			boom := errors.New("boom")
			if err := g.Do(ctx, "k", zxidfence.At(11), func(context.Context) error { ran++; return boom }); !errors.Is(err, boom) || ran != 1 {
				t.Fatalf("Do returned %v after running fn %d times; want fn's error once", err, ran)
			}
		})
	}
}

func TestDoHonoursCancelledContext(t *testing.T) {
	for name, g := range guards(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testContext(t))
			cancel()
			if err := g.Do(ctx, "k", zxidfence.At(1), nil); !errors.Is(err, context.Canceled) {
				t.Fatalf("Do with a cancelled context = %v; want context.Canceled", err)
			}
		})
	}
}

func TestMemoryDoWaitsForHolderUntilContextEnds(t *testing.T) {
	g := zxidfence.NewMemory()
	ctx := testContext(t)
	holding, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- g.Do(ctx, "k", zxidfence.At(1), func(context.Context) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	waitCtx, cancel := context.WithCancel(ctx)
	cancel()
	if err := g.Do(waitCtx, "k", zxidfence.At(2), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Do while another holds the key, context cancelled: %v", err)
	}
	if err := g.Do(ctx, "other", zxidfence.At(2), nil); err != nil {
		t.Fatalf("another key must not wait: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func mustDo(ctx context.Context, t testing.TB, g zxidfence.Guard, key string, f zxidfence.Fence) {
	t.Helper()
	if err := g.Do(ctx, key, f, nil); err != nil {
		t.Fatalf("Do(%q, %s): %v", key, f, err)
	}
}

func expectHighest(ctx context.Context, t testing.TB, g zxidfence.Guard, key string, want zxidfence.Fence) {
	t.Helper()
	got, err := g.Highest(ctx, key)
	if err != nil || got != want {
		t.Fatalf("Highest(%q) = %s, %v; want %s", key, got, err, want)
	}
}
