package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/zxidfence"
)

// The election steps. At most one step is in flight; each bumps the
// generation so that replies of earlier steps are recognised as stale.

func (c *Candidate) begin(k stepKind) uint64 {
	c.st.gen++
	c.st.step = k
	return c.st.gen
}

// create issues the protected create of our znode.
func (c *Candidate) create() {
	st := &c.st
	if st.creating {
		st.restartDue = true
		return
	}
	st.creating = true
	election := st.newElection
	if election {
		st.newElection = false // tried once: later creates find it made
		c.sess.conn.Route(c.firstPath(), c.sink)
	}
	c.spawn(c.createOp(c.begin(stepCreate), election))
}

func (c *Candidate) onCreate(r createReply) {
	st := &c.st
	st.creating = false
	stale := r.gen != st.gen
	defer c.dropFirstRoute(r)
	fired := st.firstFired
	st.firstFired = false
	switch {
	case r.err == nil && (stale || !st.phase.inElection()):
		// Landed after a reconnect, a new session or a withdrawal: the next
		// listing adopts it (if our session owns it) or deletes it.
		if st.phase.inElection() {
			st.outcome.lost()
		} else {
			c.remove(c.full(r.name))
		}
	case r.err == nil:
		c.setMine(r.name)
		st.mineSt = r.stat // a candidate that waits need not read its znode back
		st.outcome.resolved()
		st.backoff.Reset()
		c.log().Debug().Str("znode", c.full(r.name)).Msg("candidate znode created")
		switch {
		case st.restartDue:
			c.list()
		case !fired && c.firstInNewElection(r):
			st.mineSt, st.mineWatched = r.own, true
			st.step = stepNone
			c.position([]node{{Name: r.name}}, true)
		case r.list != nil && r.list.err == nil:
			l := *r.list // listed right behind the create
			l.gen = c.begin(stepList)
			c.onList(l)
		default:
			c.list()
		}
	case stale:
		if isConnLoss(r.err) {
			st.outcome.lost()
		}
	case isConnLoss(r.err) || errors.Is(r.err, errCreatedGone):
		st.outcome.lost()
		st.step = stepNone
		if st.usable() {
			c.scheduleRetry()
		}
	default:
		c.fatal(aclError("create candidate znode under", c.path, r.err))
	}
	if st.restartDue {
		st.restartDue = false
		if st.step == stepNone {
			c.restart()
		}
	} else if stale && st.step == stepNone {
		c.restart()
	}
}

// firstInNewElection reports whether r proves our znode the lowest of its
// election without a listing: the election's znode was created in the
// same transaction as ours, so ours got the first sequence number and
// every other candidate's create came in a later transaction, after the
// parent existed, with a larger one (ZooKeeper's sequence counter only
// grows within a parent; a new parent cannot have wrapped it). The read
// sent right behind that transaction found our znode at firstPath and
// armed its watch; its stat (ZooKeeper returns none for a create inside a
// multi) gives the owner, checked before leading, and the token. An event
// on firstPath before this reply (firstFired: a deletion, a change of
// data) voids the read: the caller lists and reads the znode again.
func (c *Candidate) firstInNewElection(r createReply) bool {
	return r.election && r.ownErr == nil && r.own != nil && c.full(r.name) == c.firstPath()
}

// dropFirstRoute removes the route create set up for firstPath, and the
// watch the read behind the create may have armed, when our znode is not
// that one (the create was not the election's first, or failed). A znode
// there that we are deleting keeps both until onDeleted: its deletion
// ends the watch.
func (c *Candidate) dropFirstRoute(r createReply) {
	first := c.firstPath()
	if !r.routed || (c.st.mine != "" && c.full(c.st.mine) == first) || c.st.cleanup[first] {
		return
	}
	c.sess.conn.DropWatch(first, c.sink)
}

// fatal ends the leadership, if any, fails the waiting Campaigns and
// leaves the election.
func (c *Candidate) fatal(err error) {
	c.log().Error().Err(err).Msg("candidate cannot take part in the election")
	c.endLead(fmt.Errorf("%w: the candidate left the election: %w", ErrResigned, err))
	c.failWaiters(err)
	c.withdraw()
}

// list reads the children of the election path.
func (c *Candidate) list() { c.spawn(c.listOp(c.begin(stepList))) }

func (c *Candidate) onList(r listReply) {
	st := &c.st
	if !c.stepDone(r.gen) {
		return
	}
	if r.err != nil {
		c.stepFailed("list candidates of", r.err)
		return
	}
	var ours []string
	for _, ch := range r.children {
		if ownsNode(ch, c.guid) && ch != st.mine && !st.cleanup[c.full(ch)] {
			ours = append(ours, ch)
		}
	}
	if !st.phase.inElection() {
		for _, n := range ours {
			c.remove(c.full(n))
		}
		st.swept = true
		st.outcome.cleared()
		return
	}
	if st.mine != "" && !slices.Contains(r.children, st.mine) {
		c.mineGone(ErrZnodeDeleted)
		return
	}
	if st.mine == "" {
		if len(ours) > 0 {
			c.spawn(c.adoptOp(c.begin(stepAdopt), ours))
		} else {
			st.outcome.resolved()
			c.create()
		}
		return
	}
	for _, n := range ours { // duplicates of ours: a create retried or a late one
		c.remove(c.full(n))
	}
	// czxid is read only when the suffixes straddle the wrap: then serial
	// order says nothing, and no promotion skips a listing.
	c.position(electionOrder(r.children, r.czxid), r.czxid == nil)
}

// position acts on our place in the election order.
// serial says the suffixes are in serial order (none straddles the wrap).
func (c *Candidate) position(order []node, serial bool) {
	st := &c.st
	i := indexOf(order, st.mine)
	switch {
	case i < 0: // our name does not parse: cannot happen with our namings
		c.fatal(&PathError{Path: c.full(st.mine), Reason: "candidate znode name has no sequence suffix"})
	case i == 0 && st.lead == nil && st.mineSt != nil && st.mineSt.EphemeralOwner == st.sessID && st.sessID != 0:
		// Our stat, from the create's reply or read in this session, already
		// proves ownership and gives the token: lead now, then arm the watch
		// on our znode and check it again (a deletion in between ends the
		// term). A cold start costs one round trip, not two.
		c.becomeLeader(st.mineSt)
		if st.mineWatched { // armed while we waited: nothing to read
			c.forgetPred()
			st.proof = proofFirst
		} else {
			c.getMine()
		}
	case i == 0:
		c.getMine()
	default:
		st.proof = proofNone
		if st.lead != nil { // someone sorts before the sitting leader
			c.endLead(ErrSuspended)
		}
		c.watchPred(c.full(order[i-1].Name))
		if i == 1 && serial {
			st.proof = proofBehindLowest
		}
	}
}

// onAdopt adopts the lowest of our GUID's znodes owned by the current
// session; every other one is deleted.
func (c *Candidate) onAdopt(r adoptReply) {
	st := &c.st
	if !c.stepDone(r.gen) {
		return
	}
	if r.err != nil {
		c.stepFailed("read own znodes under", r.err)
		return
	}
	var owned []node
	for name, stat := range r.stats {
		n, ok := parseNode(name)
		if ok && stat.EphemeralOwner == st.sessID && st.sessID != 0 {
			owned = append(owned, n)
			continue
		}
		c.remove(c.full(name))
	}
	sortNodes(owned)
	for _, n := range owned[min(1, len(owned)):] {
		c.remove(c.full(n.Name))
	}
	st.outcome.resolved()
	if len(owned) == 0 {
		c.create()
		return
	}
	c.setMine(owned[0].Name)
	c.log().Info().Str("znode", st.minePath).Msg("adopted own znode after an unanswered create")
	c.list()
}

// getMine reads our znode with a data watch (a leader watches its own
// znode), and checks its owner before leading.
func (c *Candidate) getMine() {
	st := &c.st
	path := st.minePath
	c.forgetPred()
	c.sess.conn.Route(path, c.sink)
	gen, get := c.begin(stepGetMine), c.getDataOp(path)
	c.spawn(func(ctx context.Context) any {
		stat, err := get(ctx)
		return mineReply{gen: gen, stat: stat, err: err}
	})
}

func (c *Candidate) onMine(r mineReply) {
	st := &c.st
	if !c.stepDone(r.gen) {
		return
	}
	switch {
	case errors.Is(r.err, zk.ErrNoNode):
		c.mineGone(ErrZnodeDeleted)
	case r.err != nil:
		c.stepFailed("read own znode under", r.err)
	case r.stat.EphemeralOwner != st.sessID || st.sessID == 0:
		// Sorts first but belongs to another (earlier) session: not ours.
		c.remove(st.minePath)
		c.sess.conn.Unroute(st.minePath, c.sink)
		c.setMine("")
		c.endLead(ErrSessionExpired)
		c.settleOpen(ErrSessionExpired)
		if st.phase.inElection() {
			c.create()
		}
	case st.lead != nil && st.lead.znode == st.minePath:
		// Still leading (re-checked after a reconnect or a data change).
		st.mineSt, st.proof = r.stat, proofFirst
	default:
		st.mineSt, st.proof = r.stat, proofFirst
		c.becomeLeader(r.stat)
	}
}

// forgetPred stops watching the predecessor, if any.
func (c *Candidate) forgetPred() {
	st := &c.st
	if st.pred != "" {
		c.sess.conn.DropWatch(st.pred, c.sink)
		st.pred = ""
		st.proof.drop(proofBehindLowest)
	}
}

// watchPred watches the immediate predecessor with a data watch.
func (c *Candidate) watchPred(path string) {
	st := &c.st
	if st.pred != path {
		if st.pred != "" {
			c.sess.conn.DropWatch(st.pred, c.sink)
		}
		st.pred = path
		c.sess.conn.Route(path, c.sink)
	}
	gen, get := c.begin(stepGetPred), c.getDataOp(path)
	var getOwn func(context.Context) (*zk.Stat, error)
	if !st.mineWatched {
		// Arm the watch on our own znode now, with the wait, and read its
		// stat: a promotion then needs no request before leading.
		own := st.minePath
		c.sess.conn.Route(own, c.sink)
		getOwn = c.getDataOp(own)
	}
	c.spawn(func(ctx context.Context) any {
		pred, err := get(ctx)
		if err != nil || getOwn == nil {
			return predReply{gen: gen, stat: pred, err: err}
		}
		stat, err := getOwn(ctx)
		return predReply{gen: gen, stat: pred, own: stat, ownErr: err}
	})
}

func (c *Candidate) onPred(r predReply) {
	st := &c.st
	if !c.stepDone(r.gen) {
		return
	}
	switch {
	case errors.Is(r.err, zk.ErrNoNode):
		c.list() // gone before the watch was set: re-read, never assume
	case r.err != nil:
		c.stepFailed("watch predecessor under", r.err)
	case errors.Is(r.ownErr, zk.ErrNoNode):
		c.mineGone(ErrZnodeDeleted)
	default:
		st.backoff.Reset() // waiting for the predecessor to go
		if r.own != nil {  // read with its watch: armed from now on
			st.mineSt, st.mineWatched = r.own, true
		}
		c.warnIfStuck(r.stat)
		if f := c.cfg.onWaiting; f != nil {
			f()
		}
	}
}

// promotable reports whether the predecessor's deletion, just seen, proves
// us first without a listing (DESIGN.md "Promotion without a round trip"):
// the last listing in this connection showed it lowest in serial order,
// our znode's watch is armed, and the stat we hold (create2's, or read with
// that watch) shows the current session owns our znode.
func (c *Candidate) promotable() bool {
	st := &c.st
	return st.proof == proofBehindLowest && st.mineWatched && st.mineSt != nil && st.mine != "" &&
		st.sessID != 0 && st.mineSt.EphemeralOwner == st.sessID &&
		st.usable() && st.phase == phaseCampaigning
}

// promote leads on the stat we hold, the predecessor's watch having fired
// (nothing to remove on the server).
func (c *Candidate) promote() {
	st := &c.st
	c.sess.conn.Unroute(st.pred, c.sink)
	st.pred, st.step = "", stepNone
	st.proof = proofFirst // first, watched, and no event since: onLeaseBack may lead on it
	c.becomeLeader(st.mineSt)
}

// warnIfStuck logs, once per predecessor, that the znode we wait behind
// (pred's stat) is persistent: no session's end will delete it, so neither
// we nor anyone behind us can lead until someone does. It is not ours to
// delete. Only the candidate right behind it sees it; the ones behind that
// one wait on ephemeral znodes as usual.
func (c *Candidate) warnIfStuck(pred *zk.Stat) {
	st := &c.st
	if pred == nil || pred.EphemeralOwner != 0 || st.stuck == st.pred {
		return
	}
	st.stuck = st.pred
	c.log().Warn().Str("predecessor", st.pred).Str("znode", st.minePath).
		Msg("waiting behind a persistent znode (no session owns it, so none ends it): this election is stuck until someone deletes it")
}

// stepFailed handles a failed step: connection loss waits for the session
// (or retries while it still looks usable); anything else is fatal.
func (c *Candidate) stepFailed(what string, err error) {
	if isConnLoss(err) || errors.Is(err, zk.ErrConnectionClosed) {
		if c.st.usable() {
			c.scheduleRetry()
		}
		return
	}
	c.fatal(aclError(what, c.path, err))
}

// becomeLeader starts a leadership on our znode, whose stat was just read,
// and reports whether it did. While the local lease is out (ZooKeeper has
// not answered a request sent recently enough, as on an overloaded
// connection) it does not: a leadership would end at once. It waits for the
// lease instead (see lease.go); nothing else would restart the
// election, since the connection never dropped.
func (c *Candidate) becomeLeader(stat *zk.Stat) bool {
	st := &c.st
	if !c.leaseHolds() {
		c.log().Debug().Str("znode", st.minePath).Msg("first in line, but the lease is out: waiting for it")
		c.awaitLease()
		return false
	}
	if !c.enter(phaseLeading) { // only a campaigning candidate leads
		return false
	}
	c.settleOpen(nil) // leading in the same session: it did not expire
	st.backoff.Reset()
	if st.retry != nil { // a retry scheduled before would only re-read
		st.retry.Stop()
		st.retry = nil // a leader holds no timer
	}
	znode := st.minePath
	l := newLeadership(c, zxidfence.Token(stat.Czxid), znode, stat.Version, st.sessID)
	st.lead = l
	c.current.Store(l)
	c.sess.metrics.leading(c.cfg.metricsLabel, st.since)
	if c.cfg.metricsLabel == c.path {
		c.sess.metrics.token(c.path, l.token, true)
	}
	st.since = time.Time{}
	c.log().Info().Str("znode", znode).Stringer("token", l.token).Int64("session_id", st.sessID).Msg("leadership acquired")
	c.armLease(l)
	for _, w := range st.waiters {
		w.reply <- campaignResult{lead: l}
	}
	st.waiters = nil
	return true
}

// endLead ends the current leadership for reason: the context is cancelled
// (and the accessors say "not leader") before anything else reports it.
func (c *Candidate) endLead(reason error) {
	st := &c.st
	l := st.lead
	if l == nil {
		return
	}
	st.lead = nil
	c.enter(phaseCampaigning)
	if errors.Is(reason, ErrSuspended) {
		c.suspend(l) // its reason may stay open
	}
	l.end(reason)
	c.current.CompareAndSwap(l, nil)
	c.sess.forgetLease(l)
	if st.phase.inElection() && st.since.IsZero() {
		st.since = time.Now()
	}
	reason = l.Err()
	c.sess.metrics.notLeading(c.cfg.metricsLabel)
	if !l.open() {
		c.sess.metrics.lostFor(c.cfg.metricsLabel, reason)
	} // else counted with its final reason by settleOpen
	if c.cfg.metricsLabel == c.path {
		c.sess.metrics.token(c.path, 0, false)
	}
	ev := c.log().Info().Str("znode", l.znode).Stringer("token", l.token).Int64("session_id", l.sessionID).
		Str("reason", reasonLabel(reason))
	if l.open() {
		c.settleOpen(nil) // an earlier open reason: this session lived on after it
		st.open = l
		ev = ev.Bool("session_may_have_expired", true)
	}
	ev.Msg("leadership ended")
}

// remove deletes path in the background, retried until done.
func (c *Candidate) remove(path string) {
	st := &c.st
	if path == "" || st.cleanup[path] || st.session == sessClosed {
		return
	}
	if st.cleanup == nil {
		st.cleanup = map[string]bool{}
	}
	st.cleanup[path] = true
	c.spawn(c.deleteOp(path))
}

func (c *Candidate) onDeleted(r deleteReply) {
	delete(c.st.cleanup, r.path)
	if r.path != c.st.pred {
		c.sess.conn.Unroute(r.path, c.sink)
	}
	if pred, ok := c.st.dropAfter[r.path]; ok { // the withdrawal's delete went first
		delete(c.st.dropAfter, r.path)
		if pred != c.st.pred {
			c.sess.conn.DropWatch(pred, c.sink)
		}
	}
	if r.err != nil && !errSessionGone(r.err) {
		c.log().Warn().Err(r.err).Str("znode", r.path).Msg("could not delete candidate znode")
	}
}

// stepDone reports whether a reply of generation gen belongs to the current
// step, and if so marks that step finished; a stale reply is dropped.
func (c *Candidate) stepDone(gen uint64) bool {
	if gen != c.st.gen {
		return false
	}
	c.st.step = stepNone
	return true
}
