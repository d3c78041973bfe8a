package partition_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// signalWriter is a log sink that closes seen the first time a line
// containing want is written.
type signalWriter struct {
	want []byte
	once sync.Once
	seen chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// TestRunWaitsOutAnUnreachableEnsemble starts a member while its only
// server is down: Run keeps trying to register instead of returning
// ZooKeeper's "could not connect" error, and leads every shard once the
// server is back.
func TestRunWaitsOutAnUnreachableEnsemble(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	sess := connectTo(t, c.Addrs(), sessionTimeout)
	if err := c.Stop(0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the session to notice its server is gone", func() (bool, string) {
		return !sess.Connected(), "still connected"
	})
	retrying := &signalWriter{want: []byte("retrying"), seen: make(chan struct{})}
	tr, shards := newTracker(), partition.Range(0, 8)
	m := startMemberOn(t, sess, newRoot(t), "lonely", shards, tr, func(cfg *partition.Config) {
		cfg.Logger = zerolog.New(retrying)
	})
	select {
	case <-retrying.seen:
	case err := <-m.done:
		t.Fatalf("Run returned while the ensemble was down: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run neither retried nor returned within 30s of the ensemble going down")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Restart(ctx, 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the member to lead every shard once its server is back", func() (bool, string) {
		n := len(m.m.Leaderships())
		return n == len(shards), fmt.Sprintf("%d/%d led", n, len(shards))
	})
	tr.check(t, false)
}

// TestRunEndsWhenTheSessionIsClosedWhileRegistering closes the session
// while Run is still trying to register (its server out of reach), and
// runs a Manager on a session already closed: Run returns an error wrapping
// recipe.ErrSessionClosed at once in both cases, instead of retrying the
// closed connection's "connection closed" until its ctx ends.
func TestRunEndsWhenTheSessionIsClosedWhileRegistering(t *testing.T) {
	proxy := zkc.NewProxyT(t)
	sess := connectTo(t, proxy.Addrs(), sessionTimeout)
	retrying := &signalWriter{want: []byte("retrying"), seen: make(chan struct{})}
	m, err := partition.NewManager(sess, newRoot(t), partition.Config{
		MemberID: "a", Shards: partition.Range(0, 3), Logger: zerolog.New(retrying),
	})
	if err != nil {
		t.Fatal(err)
	}
	proxy.Blackhole()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	select {
	case <-retrying.seen:
	case err := <-done:
		t.Fatalf("Run returned while its server was out of reach: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not retry within 30s of its server going out of reach")
	}
	_ = sess.Close()
	runEndsClosed(t, done, "the session was closed while Run registered")

	closed := connect(t, sessionTimeout)
	m2, err := partition.NewManager(closed, newRoot(t), partition.Config{MemberID: "a", Shards: partition.Range(0, 3)})
	if err != nil {
		t.Fatal(err)
	}
	_ = closed.Close()
	done2 := make(chan error, 1)
	go func() { done2 <- m2.Run(ctx) }()
	runEndsClosed(t, done2, "Run started on a closed session")
}

// runEndsClosed waits for Run's error on done and checks it wraps
// recipe.ErrSessionClosed.
func runEndsClosed(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if !errors.Is(err, recipe.ErrSessionClosed) {
			t.Errorf("%s: Run returned %v, want an error wrapping recipe.ErrSessionClosed", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: Run did not return within 10s", what)
	}
}
