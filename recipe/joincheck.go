package recipe

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
)

// This file closes the window between the ACL check and the create. The
// check before a create (checkACL) finds a missing election path safe;
// someone who may create children of its parent (a shared level, see
// SharedParentACL) can create the path open in the round trip before the
// candidate's create lands in it, and then delete the leader's znode at
// will. So a secured candidate checks again once its znode exists, before
// the loop sees the create's reply: while its znode is there the path
// cannot be deleted or replaced, and an ACL found safe then lets nobody
// outside the group change either afterwards. A path found open, or a
// znode gone or replaced meanwhile, makes the create fail and its znode
// withdrawn: the candidate never takes part in an election it has not
// proved its group's.

// errCreatedGone is checkJoined's error when our znode was gone by the
// time the path was proved the group's (deleted by someone with the right,
// or the path replaced): the candidate creates again, as after a
// connection loss.
var errCreatedGone = errors.New("recipe: the candidate's znode was deleted right after its create")

// checkJoined checks the election path again after r created our znode
// (see the file's comment) and returns r, or, when the check refuses the
// path or cannot prove it (a transient error included), a reply with
// that error after deleting our znode.
func (c *Candidate) checkJoined(ctx context.Context, r createReply) createReply {
	if r.err != nil || c.cfg.aclCheck == ACLCheckOff || !secured(c.cfg.acl) {
		return r
	}
	own := c.full(r.name)
	err := c.checkACL(ctx)
	if err == nil {
		err = c.stillOurs(ctx, own, r.stat)
	}
	if err == nil {
		return r
	}
	c.deleteOp(own)(ctx) // until gone, or the session is
	return createReply{err: err}
}

// stillOurs reads our znode at p once the ACL check passed, and fails
// with errCreatedGone unless it is the znode the create made (same czxid,
// when the create's reply gave it): a path deleted and made again
// between the create and the check lost our znode with it.
func (c *Candidate) stillOurs(ctx context.Context, p string, created *zk.Stat) error {
	var ok bool
	var st *zk.Stat
	err := c.timed("exists", func() (err error) {
		ok, st, err = c.sess.conn.Exists(ctx, p)
		return err
	})
	switch {
	case err != nil:
		return err
	case !ok || st == nil || (created != nil && created.Czxid != 0 && st.Czxid != created.Czxid):
		return errCreatedGone
	}
	return nil
}
