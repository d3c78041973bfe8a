package partition

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkelect/zkelect/internal/retry"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// This file is Run: it prepares the root's znodes and registers the
// member (waiting out a crashed run's member znode, retrying while
// ZooKeeper is out of reach), then runs the loop (loop.go) until ctx ends.

// Run registers the member, runs the elections of its assigned shards and
// keeps them balanced until ctx is done; it then resigns every shard
// gracefully (OnStoppedLeading returns before each znode is deleted) and
// returns nil once every goroutine it started, OnStartedLeading calls
// included, has returned. Run may be called once per Manager
// (ErrAlreadyRunning otherwise). It fails with ErrDuplicateMember if
// another live session (still, after waiting up to one and a half session
// timeouts for it to expire: a previous run of this member that crashed),
// or another Manager on the same session, holds the
// member id, and with an error wrapping
// recipe.ErrSessionClosed if the session is closed while it runs, or
// recipe.ErrACLDenied if ZooKeeper's ACLs forbid creating the root's znodes
// or registering the member. While
// ZooKeeper is out of reach at the start, Run keeps trying to register
// until ctx is done (then it returns ctx's cause with the last error).
func (m *Manager) Run(ctx context.Context) error {
	l, err := m.begin(ctx, release{})
	if err != nil {
		return err
	}
	return l.run(ctx)
}

// release is what a run speaks of the root's protocol: this release's
// (the zero value, Run's), or an earlier one's, which rolling-upgrade
// tests run (export_test.go).
type release struct {
	// beforeBuckets: as a release before buckets, the run campaigns at
	// <root>/shards/<id> on any root (it never reads <root>/buckets), never
	// follows a move to buckets, and its record does not advertise
	// buckets.
	beforeBuckets bool
}

// begin is Run up to its loop, for a run speaking rel: it prepares the
// root and registers the member, and returns the loop to run.
func (m *Manager) begin(ctx context.Context, rel release) (*loop, error) {
	if !m.running.CompareAndSwap(false, true) {
		return nil, ErrAlreadyRunning
	}
	if err := m.prepare(ctx, rel); err != nil {
		return nil, err
	}
	l := newLoop(m)
	l.beforeBuckets = rel.beforeBuckets
	m.run.Store(runState(l))
	// Best effort: without the listing, a shard whose znode is missing gets
	// it from its candidate, three round trips later.
	fresh, err := rootdata.NewShards(ctx, m.sess, m.root, m.rootLayout(), m.currentShards())
	if err != nil {
		m.log.Warn().Err(err).Msg("list shard znodes")
	}
	l.newShards = fresh
	if !rel.beforeBuckets {
		l.background(func() { m.followMigration(l.base) }) // layout.go
	}
	return l, nil
}

// prepare creates the root's znodes and registers the member. While
// ZooKeeper is out of reach (connection loss, no server, a session being
// replaced) it tries again, backing off from 50 ms to 1 s (a pause the
// session's next connect ends: Session.NextConnect), until ctx ends
// or the session is closed (an error wrapping recipe.ErrSessionClosed).
// A member znode another session owns is waited for (awaitOwnerGone: a
// previous run of this member killed moments ago) and ErrDuplicateMember
// returned if it outlives the wait; any other error (an ACL refusal) is
// returned at once.
func (m *Manager) prepare(ctx context.Context, rel release) error {
	backoff := retry.Backoff{Min: 50 * time.Millisecond, Max: time.Second}
	waited := false
	for {
		next := m.sess.NextConnect() // a new session ends the pause
		err := m.prepareOnce(ctx, rel)
		if err == nil {
			return nil
		}
		if m.sessionClosed() {
			return m.closedWhilePreparing(err)
		}
		if errors.Is(err, ErrDuplicateMember) {
			if waited {
				return err
			}
			waited = true
			gone, werr := m.awaitOwnerGone(ctx)
			switch {
			case werr != nil:
				return fmt.Errorf("partition: prepare %s: %w (while waiting: %v)", m.root, werr, err)
			case !gone:
				return fmt.Errorf("%w (still held after waiting %v for its session to expire)", err, ownerExpiryWait(m.sess.Timeout()))
			}
			continue
		}
		if !rootdata.Unreachable(err) {
			return err
		}
		pause := backoff.Next()
		m.log.Warn().Err(err).Dur("retry_in", pause).Msg("ZooKeeper out of reach while registering; retrying")
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("partition: prepare %s: %w (last error: %v)", m.root, context.Cause(ctx), err)
		case <-m.sess.Done():
			t.Stop()
			return m.closedWhilePreparing(err)
		case <-next:
			t.Stop()
		case <-t.C:
		}
	}
}

// closedWhilePreparing is prepare's error once the session is closed. The
// last attempt's error is logged, not wrapped: it is the closed
// connection's.
func (m *Manager) closedWhilePreparing(last error) error {
	m.log.Debug().Err(last).Msg("session closed while registering")
	return fmt.Errorf("partition: prepare %s: %w", m.root, recipe.ErrSessionClosed)
}

// prepareOnce is one attempt of prepare.
func (m *Manager) prepareOnce(ctx context.Context, rel release) error {
	layout, err := rootdata.EnsurePaths(ctx, m.sess, m.root, m.cfg.ACL, m.newLayout, m.cfg.JuteMaxBuffer)
	if err != nil {
		return fmt.Errorf("partition: prepare %s: %w", m.root, rootdata.ACLDenied(err))
	}
	if rel.beforeBuckets {
		layout = rootdata.Flat // as a release before buckets: it never read <root>/buckets
	} else if layout.Bucketed() && !layout.Migrating() {
		if err := rootdata.LockShards(ctx, m.sess, m.root); err != nil {
			return fmt.Errorf("partition: prepare %s: %w", m.root, err)
		}
	}
	if err := m.checkShards(layout, m.currentShards()); err != nil {
		return fmt.Errorf("partition: prepare %s: %w", m.root, err)
	}
	m.layout.Store(&layout)
	if err := m.checkRootACL(ctx); err != nil {
		return fmt.Errorf("partition: prepare %s: %w", m.root, err)
	}
	return rootdata.ACLDenied(rootdata.Register(ctx, m.sess, m.memberPath(), m.sess.ID(), m.instance, m.cfg.ACL))
}

// ownerExpiryWait is how long Run waits for the member znode held by
// another session to go before refusing the member id: a member restarted
// right after a crash (SIGKILL, OOM) finds its previous run's znode, owned
// by a session ZooKeeper has not expired yet. ZooKeeper expires a session
// within its timeout rounded up to the next tick (at most half a session
// timeout, since the minimum session is two ticks), so one and a half of
// our session timeouts covers a previous run with the same timeout.
func ownerExpiryWait(sessionTimeout time.Duration) time.Duration {
	return sessionTimeout + sessionTimeout/2
}

// awaitOwnerGone waits, at most ownerExpiryWait, for the member znode
// another session owns to be deleted, and reports false if another session
// still owns it after the whole wait. It logs once what it waits for. It
// returns ctx's cause if ctx ends first; a failing read ends the wait
// (true: prepare's next attempt decides).
func (m *Manager) awaitOwnerGone(ctx context.Context) (bool, error) {
	wait := ownerExpiryWait(m.sess.Timeout())
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	logged := false
	for {
		ok, st, ch, err := m.sess.ExistsW(ctx, m.memberPath())
		switch {
		case err != nil && ctx.Err() != nil:
			return false, waitEnded(ctx)
		case err != nil:
			return true, nil
		case !ok || st.EphemeralOwner == m.sess.ID():
			return true, nil
		case !logged:
			logged = true
			m.log.Warn().Str("znode", m.memberPath()).Str("owner_session", fmt.Sprintf("0x%x", st.EphemeralOwner)).
				Dur("wait", wait).
				Msg("member id held by another session: waiting for it to expire (a previous run of this member that was killed?) before registering")
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false, waitEnded(ctx)
		}
	}
}

// waitEnded is nil when the wait's own deadline passed, else the cause
// of the caller's ctx ending.
func waitEnded(ctx context.Context) error {
	if context.Cause(ctx) == context.DeadlineExceeded {
		return nil
	}
	return context.Cause(ctx)
}
