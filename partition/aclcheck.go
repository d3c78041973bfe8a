package partition

import (
	"context"
	"errors"
	"path"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// checkRootACL reads the ACL of the root and its parent, of members/,
// owners/, shards/ and buckets/ (absent in a flat root), and of the operator znode (recipe.CheckACL), as
// Config.ACLCheck says. Below them every znode is created by members with
// Config.ACL (shards' elections under shards/, whose ACL is checked), so
// checking these once at start covers the tree. A refusal is an error
// wrapping a *recipe.UnsafeACLError.
func (m *Manager) checkRootACL(ctx context.Context) error {
	if m.cfg.ACLCheck == recipe.ACLCheckOff {
		return nil
	}
	paths := []string{m.root, path.Join(m.root, membersDir), path.Join(m.root, ownersDir),
		path.Join(m.root, shardsDir), rootdata.BucketsPath(m.root), m.operatorPath()}
	for _, p := range paths {
		err := recipe.CheckACL(ctx, m.sess, p, m.cfg.ACL)
		var unsafe *recipe.UnsafeACLError
		if m.cfg.ACLCheck == recipe.ACLCheckWarn && errors.As(err, &unsafe) {
			m.log.Warn().Err(err).Msg("root znode open to others, accepted (Config.ACLCheck)")
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}
