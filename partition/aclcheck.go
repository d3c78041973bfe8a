package partition

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/go-zookeeper/zk"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// checkWorkers bounds the ACL reads of the shard elections and member
// records checkRootACL has in flight at once.
const checkWorkers = 8

// checkRootACL reads the ACL of the root and its parent, of members/,
// owners/, shards/ and buckets/ (absent in a flat root), and of the operator znode (recipe.CheckACL), as
// Config.ACLCheck says; then of every existing shard election (children
// of shards/; in a bucketed root, the buckets) and member record (children of owners/): members create
// them with Config.ACL, but a root that an earlier, open release made and
// an operator secured by hand (setAcl of the znodes refused by name
// above) keeps them open, and an open shard election lets anyone delete
// its leader's znode or plant a candidate, an open record lets anyone
// forge it. Below those every znode is a candidate's, ephemeral, created
// with Config.ACL. A refusal is an error wrapping a
// *recipe.UnsafeACLError.
func (m *Manager) checkRootACL(ctx context.Context) error {
	if m.cfg.ACLCheck == recipe.ACLCheckOff {
		return nil
	}
	paths := []string{m.root, path.Join(m.root, membersDir), path.Join(m.root, ownersDir),
		path.Join(m.root, shardsDir), rootdata.BucketsPath(m.root), m.operatorPath()}
	for _, p := range paths {
		if p == rootdata.ShardsPath(m.root) && m.shardsLocked(ctx) {
			continue // a bucketed root's, READ only (shardslock.go)
		}
		if err := m.checkACL(ctx, p); err != nil {
			return err
		}
	}
	for _, dir := range []string{path.Join(m.root, shardsDir), path.Join(m.root, ownersDir), rootdata.BucketsPath(m.root)} {
		if err := m.checkChildrenACL(ctx, dir); err != nil {
			return err
		}
	}
	return nil
}

// checkACL checks p (recipe.CheckACL) and returns nil for an unsafe ACL
// Config.ACLCheck accepts, logging it.
func (m *Manager) checkACL(ctx context.Context, p string) error {
	err := recipe.CheckACL(ctx, m.sess, p, m.cfg.ACL)
	var unsafe *recipe.UnsafeACLError
	if m.cfg.ACLCheck == recipe.ACLCheckWarn && errors.As(err, &unsafe) {
		m.log.Warn().Err(err).Msg("root znode open to others, accepted (Config.ACLCheck)")
		return nil
	}
	return err
}

// checkChildrenACL checks every child of dir, checkWorkers at a time,
// and returns the first refusal or error. Accepted unsafe children are
// logged once for dir, with their count: a root of an earlier open
// release may hold thousands.
func (m *Manager) checkChildrenACL(ctx context.Context, dir string) error {
	kids, _, err := m.sess.Children(ctx, dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil // buckets/ in a flat root
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	next := make(chan string)
	var (
		mu             sync.Mutex
		unsafe, failed error // the first of each
		open           int
		wg             sync.WaitGroup
	)
	for range min(checkWorkers, len(kids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				err := recipe.CheckACL(ctx, m.sess, p, m.cfg.ACL)
				var u *recipe.UnsafeACLError
				mu.Lock()
				switch {
				case errors.As(err, &u):
					open++
					unsafe = cmp.Or(unsafe, err)
				case err != nil:
					failed = cmp.Or(failed, err)
				}
				mu.Unlock()
			}
		}()
	}
	for _, k := range kids {
		next <- path.Join(dir, k)
	}
	close(next)
	wg.Wait()
	switch {
	case failed != nil:
		return failed
	case unsafe != nil && m.cfg.ACLCheck == recipe.ACLCheckWarn:
		m.log.Warn().Err(unsafe).Int("open", open).Int("of", len(kids)).Str("dir", dir).
			Msg("znodes under the root open to others, accepted (Config.ACLCheck)")
		return nil
	}
	return unsafe
}
