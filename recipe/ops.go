package recipe

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/internal/zkconn"
	"github.com/zkelect/zkelect/internal/znode"
)

// Replies of ZooKeeper calls, delivered to the loop. gen is the generation
// of the step that issued the call; a reply of an older one is stale.
type (
	createReply struct {
		gen  uint64
		name string     // child name, on success
		stat *zk.Stat   // its stat, from the create's reply
		list *listReply // the children, listed right behind the create
		err  error
		// routed: the create was tried with its election's (see
		// WithNewElection) and the loop routed firstPath to the candidate.
		routed bool
		// election: the election's znode was created in the create's
		// transaction; own and ownErr are then the read of our znode, with
		// its watch, sent right behind that transaction instead of a listing.
		election bool
		own      *zk.Stat
		ownErr   error
	}
	listReply struct {
		gen      uint64
		children []string
		czxid    map[string]int64 // only when sequence order is ambiguous
		err      error
	}
	adoptReply struct {
		gen   uint64
		stats map[string]*zk.Stat // child name -> stat; missing: gone
		err   error
	}
	mineReply struct {
		gen  uint64
		stat *zk.Stat
		err  error
	}
	predReply struct {
		gen    uint64
		stat   *zk.Stat // the predecessor's
		err    error
		own    *zk.Stat // our znode's stat, when asked for
		ownErr error
	}
	deleteReply struct {
		path string
		err  error // nil: deleted or already gone
	}
)

// spawn runs fn in a short-lived goroutine and posts its result to the loop
// (dropped if the loop has exited). fn's ctx ends when the session closes:
// a call may outlive its candidate's Close, not its session. The session
// counts it too, so that Session.Close waits for it.
func (c *Candidate) spawn(fn func(ctx context.Context) any) {
	c.opsWG.Add(1)
	release := c.sess.conn.Busy()
	go func() {
		defer release()
		defer c.opsWG.Done()
		c.mb.post(fn(c.sess.ctx))
	}()
}

// timed runs a ZooKeeper call and records its latency.
func (c *Candidate) timed(op string, fn func() error) error {
	start := time.Now()
	err := fn()
	c.sess.metrics.request(op, start, err)
	return err
}

// createOp creates our ephemeral sequential znode, creating missing
// parents; with election set, the election's znode is created in the same
// transaction, in front of it (see WithNewElection).
func (c *Candidate) createOp(gen uint64, election bool) func(context.Context) any {
	prefix, data, acl := c.path+"/"+c.prefix, []byte(c.cfg.id), c.cfg.acl
	var parent *zkconn.Create2Request
	if election {
		parent = &zkconn.Create2Request{Path: c.path, Acl: acl}
	}
	return func(ctx context.Context) any {
		if err := c.checkACL(ctx); err != nil {
			return createReply{gen: gen, err: err}
		}
		r, alone := c.batchedCreate(ctx, prefix, data, acl, parent)
		if alone {
			r = c.createAndList(ctx, prefix, data, acl)
		}
		if errors.Is(r.err, zk.ErrNoNode) {
			err := c.ensureParents(ctx)
			if err == nil {
				err = c.checkACL(ctx) // a parent made by someone else meanwhile
			}
			if err != nil {
				r = createReply{err: err}
			} else {
				r = c.createAndList(ctx, prefix, data, acl)
			}
		}
		r = c.checkJoined(ctx, r) // no window between the check and the create
		r.gen, r.routed = gen, election
		return r
	}
}

// firstPath is the path of the first sequential child of the election's
// znode, which our create gets when it creates the election too.
func (c *Candidate) firstPath() string {
	if c.first != "" {
		return c.first
	}
	return c.path + "/" + c.prefix + znode.FirstSuffix
}

// createAndList writes create2, which returns the new znode's stat, and
// lists the children right behind it without waiting: the server answers a
// session's requests in order, so the listing sees the znode. A listing
// that went out on another connection cannot be told apart here, but then
// the session was disconnected in between and the loop finds the reply
// stale.
func (c *Candidate) createAndList(ctx context.Context, prefix string, data []byte, acl []zk.ACL) createReply {
	start := time.Now()
	call, err := c.sess.conn.SendCreate2(ctx, prefix, data, zk.FlagEphemeral|zk.FlagSequence, acl)
	if err != nil {
		c.sess.metrics.request("create", start, err)
		return createReply{err: err}
	}
	list := c.readChildren(ctx)
	p, stat, err := call.Result(ctx)
	c.sess.metrics.request("create", start, err)
	if err != nil {
		return createReply{err: err}
	}
	return createReply{name: znode.Name(p), stat: stat, list: &list}
}

// batchedCreate makes the create of createAndList in one of the session's
// batched multis (WithBatchedCreates, or election's create in front of it:
// WithNewElection), reading right behind that multi. alone says the
// candidate must create on its own instead: it does not batch, or its
// create failed by itself in the batch.
func (c *Candidate) batchedCreate(ctx context.Context, prefix string, data []byte, acl []zk.ACL, election *zkconn.Create2Request) (r createReply, alone bool) {
	if !c.cfg.batched && election == nil {
		return createReply{}, true
	}
	start := time.Now()
	j := c.sess.creates.submit(ctx, &zkconn.Create2Request{Path: prefix, Data: data, Acl: acl, Flags: zk.FlagEphemeral | zk.FlagSequence}, election)
	out := c.awaitBatch(ctx, j, &r)
	if out.alone {
		return createReply{}, true
	}
	c.sess.metrics.request("create", start, out.err)
	if out.err != nil {
		return createReply{err: out.err}, false
	}
	r.name, r.stat, r.election = znode.Name(out.path), out.stat, out.election
	return r, false
}

// awaitBatch waits for the outcome of j, reading behind each multi that
// carries it: the children, or our znode with its watch when the
// election's create rode in front of ours. A batch queued again (its
// election existed) is read behind again once it is sent again.
func (c *Candidate) awaitBatch(ctx context.Context, j *createJob, r *createReply) createOutcome {
	for {
		var sent sendOutcome
		select {
		case sent = <-j.sent:
		case <-ctx.Done(): // the session closed: the sender gives up with it
			return createOutcome{err: ctx.Err()}
		}
		if sent.err != nil {
			return <-j.done
		}
		var list listReply
		var own *zk.Stat
		var ownErr error
		if sent.election {
			own, ownErr = c.getDataOp(c.firstPath())(ctx)
		} else {
			list = c.readChildren(ctx)
		}
		out := <-j.done
		switch {
		case out.again:
			continue
		case out.err != nil:
		case sent.election:
			r.own, r.ownErr = own, ownErr
		default:
			r.list = &list
		}
		return out
	}
}

// ensureParents creates the election path and its missing ancestors,
// persistent. The election path gets the candidate's ACL; missing
// ancestors get SharedParentACL: with a secured ACL anyone may create
// children there (another group's election) and nobody may delete one,
// so the idle election path cannot be deleted and made again open, and
// one group's ACL does not lock others out of a shared prefix such as
// /apps. Ancestors that exist keep their ACL. A create refused by an ACL
// is no failure when the znode exists: ZooKeeper checks the parent's ACL
// before it looks.
func (c *Candidate) ensureParents(ctx context.Context) error {
	parts := strings.Split(c.path[1:], "/")
	for i := range parts {
		p := "/" + strings.Join(parts[:i+1], "/")
		acl := c.cfg.acl
		if p != c.path {
			acl = SharedParentACL(c.cfg.acl)
		}
		err := c.timed("create", func() error {
			_, err := c.sess.conn.Create(ctx, p, nil, 0, acl)
			return err
		})
		if errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrInvalidACL) {
			if ok, _, xerr := c.sess.conn.Exists(ctx, p); xerr == nil && ok {
				err = nil
			}
		}
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// checkACL runs CheckACL on the election path before a create, as
// WithACLCheck says; a refusal is an *UnsafeACLError, a transient read
// error is returned as it is (the create is retried).
func (c *Candidate) checkACL(ctx context.Context) error {
	if c.cfg.aclCheck == ACLCheckOff {
		return nil
	}
	err := CheckACL(ctx, c.sess, c.path, c.cfg.acl)
	var unsafe *UnsafeACLError
	if c.cfg.aclCheck == ACLCheckWarn && errors.As(err, &unsafe) {
		c.log().Warn().Err(err).Msg("election znode open to others, accepted (WithACLCheck(ACLCheckWarn))")
		return nil
	}
	return err
}

// listOp reads the children.
func (c *Candidate) listOp(gen uint64) func(context.Context) any {
	return func(ctx context.Context) any {
		r := c.readChildren(ctx)
		r.gen = gen
		return r
	}
}

// readChildren reads the children; when their sequences span half the
// 32-bit circle it also reads each one's czxid, to order them by creation.
func (c *Candidate) readChildren(ctx context.Context) listReply {
	var children []string
	err := c.timed("get_children", func() (err error) {
		children, _, err = c.sess.conn.Children(ctx, c.path)
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return listReply{}
	}
	if err != nil {
		return listReply{err: err}
	}
	r := listReply{children: children}
	if ns := parseNodes(children); seqOrderAmbiguous(ns) {
		r.czxid = map[string]int64{}
		for _, n := range ns {
			_, stat, err := c.sess.conn.Exists(ctx, c.full(n.Name))
			if err != nil {
				return listReply{err: err}
			}
			if stat != nil && stat.Czxid != 0 {
				r.czxid[n.Name] = stat.Czxid
			}
		}
	}
	return r
}

// adoptOp reads the stat of each of our GUID's znodes, found after an
// unanswered create. A secured candidate checks the election path first,
// as after any create (checkJoined): a path it cannot prove the group's
// fails the step, its znodes there deleted.
func (c *Candidate) adoptOp(gen uint64, names []string) func(context.Context) any {
	return func(ctx context.Context) any {
		if c.cfg.aclCheck != ACLCheckOff && secured(c.cfg.acl) {
			if err := c.checkACL(ctx); err != nil {
				for _, n := range names {
					c.deleteOp(c.full(n))(ctx)
				}
				return adoptReply{gen: gen, err: err}
			}
		}
		stats := map[string]*zk.Stat{}
		for _, n := range names {
			var ok bool
			var stat *zk.Stat
			err := c.timed("exists", func() (err error) {
				ok, stat, err = c.sess.conn.Exists(ctx, c.full(n))
				return err
			})
			if err != nil {
				return adoptReply{gen: gen, err: err}
			}
			if ok {
				stats[n] = stat
			}
		}
		return adoptReply{gen: gen, stats: stats}
	}
}

// getDataOp reads path and leaves a data watch on it, routed to the
// candidate (see zkconn.Conn.WatchData).
func (c *Candidate) getDataOp(path string) func(context.Context) (*zk.Stat, error) {
	return func(ctx context.Context) (*zk.Stat, error) {
		var stat *zk.Stat
		err := c.timed("get_data", func() (err error) {
			stat, err = c.sess.conn.WatchData(ctx, path)
			return err
		})
		return stat, err
	}
}

// deleteOp deletes path, retrying (retry.Do) on connection loss and
// every other transient error until it succeeds, the znode is gone, or the
// session is closed: a znode nobody owns in memory must not stay first,
// even after Close gave up waiting for it.
func (c *Candidate) deleteOp(path string) func(context.Context) any {
	return func(ctx context.Context) any {
		err := retry.Do(ctx, func() (bool, error) {
			err := c.timed("delete", func() error { return c.sess.conn.Delete(ctx, path, -1) })
			switch {
			case err == nil || errors.Is(err, zk.ErrNoNode):
				return true, nil
			case errSessionGone(err) || !isConnLoss(err):
				return true, err
			}
			return false, err
		})
		if err != nil && ctx.Err() != nil {
			err = ErrSessionClosed
		}
		return deleteReply{path: path, err: err}
	}
}

// indexOf returns the position of name in ns, or -1.
func indexOf(ns []node, name string) int {
	return slices.IndexFunc(ns, func(n node) bool { return n.Name == name })
}
