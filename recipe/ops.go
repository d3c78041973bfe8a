package recipe

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
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
// (dropped if the loop has exited). The session counts it too, so that
// Session.Close waits for calls that outlive their candidate's Close.
func (c *Candidate) spawn(fn func(conn *zk.Conn) any) {
	c.opsWG.Add(1)
	c.sess.calls.add()
	conn := c.sess.conn
	go func() {
		defer c.sess.calls.done()
		defer c.opsWG.Done()
		c.mb.post(fn(conn))
	}()
}

// timed runs a ZooKeeper call and records its latency.
func (c *Candidate) timed(op string, fn func() error) error {
	start := time.Now()
	err := fn()
	c.sess.metrics.request(op, start, err)
	return err
}

// createOp creates our ephemeral sequential znode, creating missing parents.
func (c *Candidate) createOp(gen uint64) func(*zk.Conn) any {
	prefix, data, acl := c.path+"/"+c.prefix, []byte(c.cfg.id), c.cfg.acl
	return func(conn *zk.Conn) any {
		r := c.createAndList(conn, prefix, data, acl)
		if errors.Is(r.err, zk.ErrNoNode) {
			if err := c.ensureParents(conn); err != nil {
				r = createReply{err: err}
			} else {
				r = c.createAndList(conn, prefix, data, acl)
			}
		}
		r.gen = gen
		return r
	}
}

// createAndList writes create2, which returns the new znode's stat, and
// lists the children right behind it without waiting: the server answers a
// session's requests in order, so the listing sees the znode. A listing
// that went out on another connection cannot be told apart here, but then
// the session was disconnected in between and the loop finds the reply
// stale.
func (c *Candidate) createAndList(conn *zk.Conn, prefix string, data []byte, acl []zk.ACL) createReply {
	start := time.Now()
	call, err := c.sess.sendCreate2(prefix, data, zk.FlagEphemeral|zk.FlagSequence, acl)
	if err != nil {
		c.sess.metrics.request("create", start, err)
		return createReply{err: err}
	}
	list := c.readChildren(conn)
	p, stat, err := call.result()
	c.sess.metrics.request("create", start, err)
	if err != nil {
		return createReply{err: err}
	}
	return createReply{name: childName(p), stat: stat, list: &list}
}

// ensureParents creates the election path (with the candidate's ACL: a
// delete of a candidate's znode is checked against it) and its ancestors
// (open, so that one group's ACL does not lock others out of a shared
// parent), persistent. A create refused by an ACL is no failure when the
// znode exists: ZooKeeper checks the parent's ACL before it looks.
func (c *Candidate) ensureParents(conn *zk.Conn) error {
	parts := strings.Split(c.path[1:], "/")
	for i := range parts {
		p := "/" + strings.Join(parts[:i+1], "/")
		acl := c.cfg.acl
		if p != c.path {
			acl = zk.WorldACL(zk.PermAll)
		}
		err := c.timed("create", func() error {
			_, err := conn.Create(p, nil, 0, acl)
			return err
		})
		if errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrInvalidACL) {
			if ok, _, xerr := conn.Exists(p); xerr == nil && ok {
				err = nil
			}
		}
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// listOp reads the children.
func (c *Candidate) listOp(gen uint64) func(*zk.Conn) any {
	return func(conn *zk.Conn) any {
		r := c.readChildren(conn)
		r.gen = gen
		return r
	}
}

// readChildren reads the children; when their sequences span half the
// 32-bit circle it also reads each one's czxid, to order them by creation.
func (c *Candidate) readChildren(conn *zk.Conn) listReply {
	var children []string
	err := c.timed("get_children", func() (err error) {
		children, _, err = conn.Children(c.path)
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
			_, stat, err := conn.Exists(c.full(n.Name))
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

// adoptOp reads the stat of each of our GUID's znodes.
func (c *Candidate) adoptOp(gen uint64, names []string) func(*zk.Conn) any {
	return func(conn *zk.Conn) any {
		stats := map[string]*zk.Stat{}
		for _, n := range names {
			var ok bool
			var stat *zk.Stat
			err := c.timed("exists", func() (err error) {
				ok, stat, err = conn.Exists(c.full(n))
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

// getDataOp reads path and leaves a data watch on it (see datawatch.go).
func (c *Candidate) getDataOp(path string) func(*zk.Conn) (*zk.Stat, error) {
	return func(conn *zk.Conn) (*zk.Stat, error) {
		var stat *zk.Stat
		err := c.timed("get_data", func() (err error) {
			// No ctx: the read is bounded by callBound, and ends like a
			// lost connection (which the loop retries), never with ctx's
			// error (which it would take for a failure).
			stat, err = c.sess.readWatched(context.Background(), conn, path)
			return err
		})
		return stat, err
	}
}

// deleteOp deletes path, retrying on connection loss until it succeeds, the
// znode is gone, or the session is closed: a znode nobody owns in memory
// must not stay first, even after Close gave up waiting for it.
func (c *Candidate) deleteOp(path string) func(*zk.Conn) any {
	return func(conn *zk.Conn) any {
		backoff := 20 * time.Millisecond
		for {
			err := c.timed("delete", func() error { return conn.Delete(path, -1) })
			switch {
			case err == nil || errors.Is(err, zk.ErrNoNode):
				return deleteReply{path: path}
			case errSessionGone(err) || !isConnLoss(err):
				return deleteReply{path: path, err: err}
			}
			select {
			case <-c.sess.done:
				return deleteReply{path: path, err: ErrSessionClosed}
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
		}
	}
}

// parseNodes returns the candidate nodes among children.
func parseNodes(children []string) []node {
	ns := make([]node, 0, len(children))
	for _, ch := range children {
		if n, ok := parseNode(ch); ok {
			ns = append(ns, n)
		}
	}
	return ns
}

// electionOrder returns the candidate nodes in election order.
func electionOrder(children []string, czxid map[string]int64) []node {
	ns := parseNodes(children)
	if czxid != nil {
		sortNodesByCzxid(ns, czxid)
	} else {
		sortNodes(ns)
	}
	return ns
}

// indexOf returns the position of name in ns, or -1.
func indexOf(ns []node, name string) int {
	return slices.IndexFunc(ns, func(n node) bool { return n.Name == name })
}
