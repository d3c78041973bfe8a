package root

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/recipe"
)

// checkWorkers bounds the ACL reads of the shard elections and member
// records Check has in flight at once.
const checkWorkers = 8

// ACLChecker checks the ACLs of a root's znodes for a member: its
// session, root, ACL (partition.Config.ACL) and mode
// (partition.Config.ACLCheck), and its logger for the unsafe ACLs the mode
// accepts.
type ACLChecker struct {
	Session *recipe.Session
	Root    string
	ACL     []zk.ACL
	Mode    recipe.ACLCheck
	// Bucketed: the member runs the root bucketed (not as a release before
	// buckets would): a <root>/shards that ShardsLocked says this release
	// locked is then not checked (it grants this member no change, on
	// purpose).
	Bucketed bool
	Log      zerolog.Logger
}

// Check reads the ACL of the root and its parent, of members/,
// owners/, shards/ and buckets/ (absent in a flat root), and of the
// operator znode (recipe.CheckACL), as c.Mode says; then of every
// existing shard election (children of shards/; in a bucketed root, the
// buckets) and member record (children of owners/): members create them
// with their ACL, but a root that an earlier, open release made and an
// operator secured by hand (setAcl of the znodes refused by name above)
// keeps them open, and an open shard election lets anyone delete its
// leader's znode or plant a candidate, an open record lets anyone forge
// it. Below those every znode is a candidate's, ephemeral, created with
// the members' ACL. A refusal is an error wrapping a
// *recipe.UnsafeACLError; a read's error is ZooKeeper's, wrapped with
// the path.
func (c ACLChecker) Check(ctx context.Context) error {
	if c.Mode == recipe.ACLCheckOff {
		return nil
	}
	paths := []string{c.Root, path.Join(c.Root, MembersDir), path.Join(c.Root, OwnersDir),
		ShardsPath(c.Root), BucketsPath(c.Root), path.Join(c.Root, OperatorNode)}
	for _, p := range paths {
		if p == ShardsPath(c.Root) && c.shardsLocked(ctx) {
			continue // a bucketed root's, READ only (shardslock.go)
		}
		if err := c.checkOne(ctx, p); err != nil {
			return err
		}
	}
	for _, dir := range []string{ShardsPath(c.Root), path.Join(c.Root, OwnersDir), BucketsPath(c.Root)} {
		if err := c.checkChildren(ctx, dir); err != nil {
			return err
		}
	}
	return nil
}

// shardsLocked reports whether the root is bucketed and its <root>/shards
// grants nobody more than READ, as this release creates it: recipe.CheckACL
// would refuse such a znode (it grants this member no change), and nothing
// of this release creates anything under it. A read error is false: the
// check then reads it and reports.
func (c ACLChecker) shardsLocked(ctx context.Context) bool {
	if !c.Bucketed {
		return false
	}
	acl, _, err := c.Session.GetACL(ctx, ShardsPath(c.Root))
	return err == nil && ShardsLocked(acl)
}

// checkOne checks p (recipe.CheckACL) and returns nil for an unsafe ACL
// c.Mode accepts, logging it.
func (c ACLChecker) checkOne(ctx context.Context, p string) error {
	err := recipe.CheckACL(ctx, c.Session, p, c.ACL)
	var unsafe *recipe.UnsafeACLError
	if c.Mode == recipe.ACLCheckWarn && errors.As(err, &unsafe) {
		c.Log.Warn().Err(err).Msg("root znode open to others, accepted (Config.ACLCheck)")
		return nil
	}
	return err
}

// checkChildren checks every child of dir, checkWorkers at a time,
// and returns the first refusal or error. Accepted unsafe children are
// logged once for dir, with their count: a root of an earlier open
// release may hold thousands.
func (c ACLChecker) checkChildren(ctx context.Context, dir string) error {
	kids, _, err := c.Session.Children(ctx, dir)
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
				err := recipe.CheckACL(ctx, c.Session, p, c.ACL)
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
	case unsafe != nil && c.Mode == recipe.ACLCheckWarn:
		c.Log.Warn().Err(unsafe).Int("open", open).Int("of", len(kids)).Str("dir", dir).
			Msg("znodes under the root open to others, accepted (Config.ACLCheck)")
		return nil
	}
	return unsafe
}
