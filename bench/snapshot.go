package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// This file measures the size of the servers' snapshots. ZooKeeper writes
// one every snapCount transactions (100,000 by default, and a multi of
// 256 creates is one) and when a server starts, so a cold start of
// 1,000,000 shards, about 10,000 transactions, may write none: the
// snapshot step restarts the servers for theirs.

// snapshotStep restarts every server in turn (each loads its database and
// writes a snapshot of it as it starts), reports the newest snapshot and
// how long the restart took, and waits, for at most the step limit, until
// f is balanced again.
func (e *env) snapshotStep(ctx context.Context, f *fleet, n int) ([]Result, error) {
	e.logf("bench: restarting %d servers for their snapshots", e.cluster.Size())
	start := time.Now()
	for i := range e.cluster.Size() {
		if err := e.cluster.Restart(ctx, i); err != nil {
			return nil, fmt.Errorf("bench: server %d did not load its database and serve: %w", i, err)
		}
	}
	restarted := time.Since(start)
	limit := e.stepLimit
	if limit == 0 {
		limit = convergeLimit(n)
	}
	after := "balanced again %s later"
	done, err := f.awaitConverged(ctx, limit)
	switch {
	case errors.Is(err, errNotBalanced):
		after = fmt.Sprintf("not balanced %s later (%d led: %s)", limit, f.ledCount(), f.loads())
	case err != nil:
		return nil, err
	default:
		after = fmt.Sprintf(after, done.Sub(start.Add(restarted)).Round(time.Millisecond))
	}
	return []Result{
		{Scenario: fmt.Sprintf("shards/servers restart (%d shards)", n), Value: msf(restarted), Unit: "ms",
			Note: fmt.Sprintf("each of %d servers restarted in turn, loaded its database and served; the fleet %s", e.cluster.Size(), after)},
		e.snapshotRow(ctx, n, "the servers restarted"),
	}, nil
}

// snapshotRow reports the largest of the servers' newest snapshot files
// (ZooKeeper writes one every snapCount transactions, 100,000 by
// default, and when a server starts), with the zxid it was taken at
// beside the server's current one: a snapshot taken before the fleet's
// last transactions holds fewer znodes than the tree has now.
func (e *env) snapshotRow(ctx context.Context, n int, after string) Result {
	var best snapshotFile
	var at string
	for i := range e.cluster.Size() {
		s := newestSnapshot(filepath.Join(e.cluster.Dir(), fmt.Sprintf("server-%d", i), "data", "version-2"))
		if s.size > best.size {
			best = s
			srvr, _ := e.cluster.FourLetterWord(ctx, i, "srvr")
			at = zxidRE.FindString(srvr)
		}
	}
	if best.size <= 0 {
		return Result{Scenario: fmt.Sprintf("shards/snapshot at %d", n), Unit: "bytes", Note: "no snapshot file in the servers' data dirs after " + after}
	}
	return Result{Scenario: fmt.Sprintf("shards/snapshot at %d", n), Value: float64(best.size), Unit: "bytes",
		Note: fmt.Sprintf("the newest snapshot in a server's data dir after %s, %s (%s, %.0f bytes a shard); the server is now at %s",
			after, best.name, mib(best.size), float64(best.size)/float64(n), at)}
}

// zxidRE matches srvr's "Zxid: 0x…" line.
var zxidRE = regexp.MustCompile(`Zxid: 0x[0-9a-f]+`)

// snapshotFile is a snapshot's file name and size.
type snapshotFile struct {
	name string
	size int64
}

// newestSnapshot returns the most recently written snapshot.* file in
// dir (size -1 if there is none).
func newestSnapshot(dir string) snapshotFile {
	files, _ := filepath.Glob(filepath.Join(dir, "snapshot.*"))
	var newest time.Time
	out := snapshotFile{size: -1}
	for _, p := range files {
		fi, err := os.Stat(p)
		if err == nil && fi.ModTime().After(newest) {
			newest, out = fi.ModTime(), snapshotFile{name: filepath.Base(p), size: fi.Size()}
		}
	}
	return out
}
