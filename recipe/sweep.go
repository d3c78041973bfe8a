package recipe

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/retry"
)

// A candidate whose Close gave up (the close timeout passed while it was
// cut off) may leave znodes behind in a session that lives on: a create
// that ZooKeeper applied but whose reply was lost with the connection, or
// that landed after the candidate's loop had exited, and deletions not yet
// confirmed. Such a znode sorts in the election like any other, with no
// candidate behind it: the election stalls until the session ends. So the
// exiting candidate leaves a sweeper behind, counted by the session (its
// Close waits for it): once the candidate's calls in flight have ended, it
// deletes every znode carrying the candidate's GUID under its path,
// retrying through connection loss, until none is left or the session
// ends.

// needsSweep reports whether the exiting candidate may have left a znode
// behind.
func (st *loopState) needsSweep() bool {
	return st.session != sessClosed && (st.creating || st.outcome.dupRisk() || st.mine != "" || len(st.cleanup) > 0)
}

// sweepAfterExit starts the sweeper (see the file comment).
func (c *Candidate) sweepAfterExit() {
	release := c.sess.conn.Busy()
	go func() {
		defer release()
		c.opsWG.Wait()
		c.sweep(c.sess.ctx)
	}()
}

// sweep deletes our GUID's znodes until a listing shows none, the session
// ends, or ZooKeeper refuses (logged); transient errors are retried.
func (c *Candidate) sweep(ctx context.Context) {
	err := retry.Do(ctx, func() (bool, error) {
		left, err := c.sweepOnce(ctx)
		switch {
		case err == nil:
			return left == 0, nil
		case errSessionGone(err) || errors.Is(err, zk.ErrSessionExpired) || !isConnLoss(err):
			return true, err
		}
		return false, err
	})
	if err != nil && ctx.Err() == nil && !errSessionGone(err) && !errors.Is(err, zk.ErrSessionExpired) {
		c.log().Warn().Err(err).Msg("could not sweep the znodes of a closed candidate")
	}
}

// sweepOnce lists the election and deletes our GUID's znodes; it returns
// how many it found.
func (c *Candidate) sweepOnce(ctx context.Context) (int, error) {
	children, _, err := c.sess.conn.Children(ctx, c.path)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	found := 0
	for _, ch := range children {
		if !ownsNode(ch, c.guid) {
			continue
		}
		found++
		if err := c.sess.conn.Delete(ctx, c.full(ch), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return found, err
		}
		c.log().Info().Str("znode", c.full(ch)).Msg("deleted a znode a closed candidate left behind")
	}
	return found, nil
}
