package root

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// This file reads who is registered under <root>/members: the watcher's
// view of the live members and LiveMembers (partition.LiveMembers, for
// readiness checks and tools) count them the same way.

// LiveMembers returns the members registered under root now, each with the
// id of the session that registered it. A member is an ephemeral child of
// <root>/members; a persistent child (an operator's or another tool's
// znode) belongs to no session and is not a member. It reads the children
// and then each child's stat; ctx is checked between reads. A root without
// members gives an empty map. Errors: ErrNilSession, an error wrapping
// ErrInvalidRoot, ctx's error, or ZooKeeper's wrapped with the path.
func LiveMembers(ctx context.Context, sess *recipe.Session, root string) (map[string]int64, error) {
	if sess == nil {
		return nil, ErrNilSession
	}
	if err := ValidateRoot(root); err != nil {
		return nil, err
	}
	dir := path.Join(root, MembersDir)
	ids, _, err := sess.Children(ctx, dir)
	if errors.Is(err, zk.ErrNoNode) {
		return map[string]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("partition: list %s: %w", dir, err)
	}
	m, err := readMembers(ctx, sess, dir, ids)
	return m.live, err
}

// memberZnodes is what readMembers read of <root>/members.
type memberZnodes struct {
	live       map[string]int64 // the ephemeral children: member id to its session
	czxid      map[string]int64 // the ephemeral children: member id to its znode's czxid
	persistent []string         // the other children (not members)
}

// readMembers reads the stat of each child ids of dir (<root>/members).
// Children deleted meanwhile are left out.
func readMembers(ctx context.Context, sess *recipe.Session, dir string, ids []string) (memberZnodes, error) {
	m := memberZnodes{live: make(map[string]int64, len(ids)), czxid: make(map[string]int64, len(ids))}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return memberZnodes{}, err
		}
		p := path.Join(dir, id)
		ok, st, err := sess.Exists(ctx, p)
		switch {
		case err != nil:
			return memberZnodes{}, fmt.Errorf("partition: read %s: %w", p, err)
		case !ok:
		case st.EphemeralOwner == 0:
			m.persistent = append(m.persistent, id)
		default:
			m.live[id], m.czxid[id] = st.EphemeralOwner, st.Czxid
		}
	}
	return m, nil
}
