package partition

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"
)

// This file creates the shards' election znodes (<root>/shards/<id>,
// persistent) before the first campaign, many per request: a multi of
// parentBatch creates is one ZooKeeper transaction, where a candidate
// finding its parent missing would spend three more round trips on it.

const (
	// parentBatch is how many creates one multi carries (well under the
	// 1 MB request limit for ids of MaxIDLength bytes).
	parentBatch = 500
	// parentInFlight is how many multis are in flight at once.
	parentInFlight = 4
)

// ensureShardParents creates the election znodes of ids that do not exist
// yet. Members starting together race for the same znodes: a multi that
// fails because another member created one of its znodes first is retried
// as single creates that ignore ErrNodeExists. start rotates the batch
// order (members pass different values) so that racing members mostly
// work on different batches.
func ensureShardParents(conn *zk.Conn, root string, ids []string, start int) error {
	dir := path.Join(root, shardsDir)
	existing, _, err := conn.Children(dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	have := make(map[string]bool, len(existing))
	for _, id := range existing {
		have[id] = true
	}
	var missing []string
	for _, id := range ids {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	batches := slices.Collect(slices.Chunk(missing, parentBatch))
	if len(batches) == 0 {
		return nil
	}
	start %= len(batches)
	batches = append(batches[start:], batches[:start]...)
	sem := make(chan struct{}, parentInFlight)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, batch := range batches {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := createBatch(conn, dir, batch); err != nil {
				mu.Lock()
				first = cmp.Or(first, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// createBatch creates dir/<id> for every id in one multi, or one by one
// (pipelined) if the multi fails.
func createBatch(conn *zk.Conn, dir string, ids []string) error {
	acl := zk.WorldACL(zk.PermAll)
	ops := make([]any, len(ids))
	for i, id := range ids {
		ops[i] = &zk.CreateRequest{Path: path.Join(dir, id), Acl: acl}
	}
	if _, err := conn.Multi(ops...); err == nil {
		return nil
	}
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := conn.Create(path.Join(dir, id), nil, 0, acl)
			if err != nil && !errors.Is(err, zk.ErrNodeExists) {
				errs[i] = fmt.Errorf("create %s: %w", path.Join(dir, id), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
