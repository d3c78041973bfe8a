package partition

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
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
// yet. Members starting together race for the same znodes: start rotates
// the batch order (members pass different values) so that racing members
// mostly work on different batches, and a batch that loses the race is
// retried with the znodes still missing (see createBatch).
func ensureShardParents(ctx context.Context, sess *recipe.Session, root string, ids []string, start int, acl []zk.ACL) error {
	dir := path.Join(root, shardsDir)
	missing, err := missingShards(ctx, sess, dir, ids)
	if err != nil {
		return err
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
			if err := createBatch(ctx, sess, dir, batch, acl); err != nil {
				mu.Lock()
				first = cmp.Or(first, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// missingShards returns the ids that have no znode under dir, in order.
func missingShards(ctx context.Context, sess *recipe.Session, dir string, ids []string) ([]string, error) {
	existing, _, err := sess.Children(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	have := make(map[string]bool, len(existing))
	for _, id := range existing {
		have[id] = true
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return have[id] }), nil
}

// parentRounds bounds how often createBatch retries a multi that another
// member's creates made fail.
const parentRounds = 4

// createBatch creates dir/<id> for every id in one multi. A multi fails as
// a whole when another member created one of its znodes first
// (ErrNodeExists): then the batch is narrowed to the znodes still missing
// (one listing) and tried again, a few rounds at most, and finally one by
// one (pipelined, ignoring ErrNodeExists). Creating one by one from the
// start would cost a failed write per znode another member made. Any other
// failure (an ACL refusal, a lost connection) is returned at once.
func createBatch(ctx context.Context, sess *recipe.Session, dir string, ids []string, acl []zk.ACL) error {
	for range parentRounds {
		_, err := sess.Multi(ctx, createOps(dir, ids, acl)...)
		if !errors.Is(err, zk.ErrNodeExists) {
			if err != nil {
				return fmt.Errorf("create %d shard znodes under %s: %w", len(ids), dir, err)
			}
			return nil
		}
		if ids, err = missingShards(ctx, sess, dir, ids); err != nil || len(ids) == 0 {
			return err
		}
	}
	return createEach(ctx, sess, dir, ids, acl)
}

// createOps returns a create request per id under dir, with acl.
func createOps(dir string, ids []string, acl []zk.ACL) []any {
	ops := make([]any, len(ids))
	for i, id := range ids {
		ops[i] = &zk.CreateRequest{Path: path.Join(dir, id), Acl: acl}
	}
	return ops
}

// createEach creates dir/<id> for every id, pipelined; ErrNodeExists is
// success.
func createEach(ctx context.Context, sess *recipe.Session, dir string, ids []string, acl []zk.ACL) error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := sess.Create(ctx, path.Join(dir, id), nil, 0, acl)
			if err != nil && !errors.Is(err, zk.ErrNodeExists) {
				errs[i] = fmt.Errorf("create %s: %w", path.Join(dir, id), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
