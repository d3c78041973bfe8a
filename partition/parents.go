package partition

import (
	"context"
	"fmt"
	"path"

	"github.com/zkelect/zkelect/recipe"
)

// This file finds the shards whose election znode (<root>/shards/<id>)
// does not exist when Run starts. The first candidate of each such shard
// creates the znode in the same transaction as its own
// (recipe.WithNewElection) and leads on that transaction's reply: a cold
// start of a fresh root costs one request per shard and needs no pass
// creating the shards' znodes first. A guess that was wrong (another
// member created the znode meanwhile) costs one failed transaction,
// after which the create goes without it.

// newShards returns the set of ids with no znode under <root>/shards, or
// nil when there is none.
func newShards(ctx context.Context, sess *recipe.Session, root string, ids []string) (map[string]bool, error) {
	dir := path.Join(root, shardsDir)
	existing, _, err := sess.Children(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	have := make(map[string]bool, len(existing))
	for _, id := range existing {
		have[id] = true
	}
	var missing map[string]bool
	for _, id := range ids {
		if !have[id] {
			if missing == nil {
				missing = make(map[string]bool, len(ids)-len(have))
			}
			missing[id] = true
		}
	}
	return missing, nil
}
