package partition_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/zkelect/zkelect/partition"
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
