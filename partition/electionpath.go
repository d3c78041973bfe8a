package partition

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// ElectionPath returns the znode of shard's election under root, for a
// tool that watches or reads one shard (recipe.Observe, Participants):
// <root>/buckets/<bucket>/<shard> in a root with buckets (every root this
// release creates: the bucket is a fixed hash of the shard id),
// <root>/shards/<shard> in a flat root an older release created (and,
// while such a root moves to buckets, until that election is gone). It reads
// the root's layout from the data of <root>/buckets; a root not created
// yet has the layout this release would create. Errors: ErrNilSession,
// ErrInvalidRoot, ErrInvalidShardID, an error wrapping
// rootdata's unknown-layout error for a root of a later release, and
// ZooKeeper's, wrapped with the path.
func ElectionPath(ctx context.Context, sess *recipe.Session, root, shard string) (string, error) {
	switch {
	case sess == nil:
		return "", ErrNilSession
	case rootdata.ValidateRoot(root) != nil:
		return "", rootdata.ValidateRoot(root)
	case rootdata.ValidateID(shard) != nil:
		return "", rootdata.ValidateID(shard)
	}
	l, err := rootdata.ReadLayout(ctx, sess, root)
	if errors.Is(err, zk.ErrNoNode) {
		l, err = rootdata.NewRootLayout, nil
	}
	if err != nil {
		return "", fmt.Errorf("partition: %w", err)
	}
	p, err := l.ElectionOf(ctx, sess, root, shard) // flat while the root moves, until its flat election is gone
	if err != nil {
		return "", fmt.Errorf("partition: %w", err)
	}
	return p, nil
}
