package root

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/recipe"
)

// This file registers a member: its ephemeral znode under <root>/members,
// which LiveMembers and the watchers count.

// Register creates the member's ephemeral znode with instance (the
// partition.Manager's random id) as its data. It fails with
// ErrDuplicateMember when another live session owns it, or when this
// session does but another partition.Manager registered it. A znode
// owned by a session this process held before (sess.HeldBefore:
// ZooKeeper has not ended it yet) is ours: it is
// deleted and created again. A znode that vanishes between our create and
// our check (its session just ended) is created again, a few times at most.
func Register(ctx context.Context, sess *recipe.Session, p string, session int64, instance []byte, acl []zk.ACL) error {
	for range 3 {
		_, err := sess.Create(ctx, p, instance, zk.FlagEphemeral, acl)
		if err == nil {
			return nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("register member %s: %w", p, err)
		}
		data, st, err := sess.Get(ctx, p)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue
		case err != nil:
			return fmt.Errorf("register member %s: %w", p, err)
		case st.EphemeralOwner != session && sess.HeldBefore(st.EphemeralOwner):
			if err := sess.Delete(ctx, p, st.Version); err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
				return fmt.Errorf("register member %s: delete the znode of our earlier session 0x%x: %w", p, st.EphemeralOwner, err)
			}
			log := sess.Logger()
			log.Info().Int64("session_id", session).Int64("earlier_session_id", st.EphemeralOwner).
				Msg("member znode owned by an earlier session of ours: deleted, registering again")
			continue
		case st.EphemeralOwner != session:
			return fmt.Errorf("%w: %s is owned by session 0x%x", ErrDuplicateMember, p, st.EphemeralOwner)
		case !bytes.Equal(data, instance):
			return fmt.Errorf("%w: %s is registered by another Manager on this session", ErrDuplicateMember, p)
		}
		return nil
	}
	return fmt.Errorf("register member %s: created and deleted by others repeatedly", p)
}

// KeepRegistered re-creates the member znode whenever it disappears (the
// session expired, or someone deleted it) until ctx is done. A duplicate
// found on the way is reported on fail and ends the loop.
func KeepRegistered(ctx context.Context, sess *recipe.Session, p string, instance []byte, acl []zk.ACL, log zerolog.Logger, fail func(error)) {
	retry := NewBackoff()
	for ctx.Err() == nil {
		next := sess.NextConnect() // a new session ends the pause
		err := registeredOnce(ctx, sess, p, instance, acl, log)
		switch {
		case errors.Is(err, ErrDuplicateMember):
			fail(err)
			return
		case err != nil && ctx.Err() == nil: // not our own leaving
			log.Warn().Err(err).Msg("keep member registered")
			retry.WaitOr(ctx, next)
		default:
			retry.Reset()
		}
	}
}

// registeredOnce watches the member znode, registers it again if it is
// missing or owned by an older session, and waits until it may have
// changed or ctx ends.
func registeredOnce(ctx context.Context, sess *recipe.Session, p string, instance []byte, acl []zk.ACL, log zerolog.Logger) error {
	ctx, forget := context.WithCancel(ctx)
	defer forget() // the watch, if it has not fired
	ok, st, ch, err := sess.ExistsW(ctx, p)
	if err != nil {
		return fmt.Errorf("watch own member znode: %w", err)
	}
	if id := sess.ID(); !ok || st.EphemeralOwner != id {
		if err := Register(ctx, sess, p, id, instance, acl); err != nil {
			return err
		}
		log.Info().Int64("session_id", id).Msg("member registered again")
	}
	WaitWatch(ctx, ch)
	return nil
}

// RegisteredHere reports whether the member znode p is registered by
// this partition.Manager: owned by session (ours) with instance (ours) as
// its data.
func RegisteredHere(ctx context.Context, sess *recipe.Session, p string, session int64, instance []byte) (bool, error) {
	data, st, err := sess.Get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read member znode %s: %w", p, err)
	}
	return session != 0 && st.EphemeralOwner == session && bytes.Equal(data, instance), nil
}
