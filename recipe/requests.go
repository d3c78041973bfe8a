package recipe

import "time"

// The API requests (Campaign, its cancellation, Resign, Close) as the
// event loop handles them, and the withdrawal they lead to.

// onCampaign registers a waiter, entering the election if needed.
func (c *Candidate) onCampaign(req *campaignReq) {
	st := &c.st
	switch {
	case st.closing:
		req.reply <- campaignResult{err: ErrClosed}
		return
	case st.gone:
		req.reply <- campaignResult{err: ErrSessionClosed}
		return
	case st.lead != nil && st.lead.Leading():
		req.reply <- campaignResult{lead: st.lead}
		return
	}
	st.waiters = append(st.waiters, req)
	if !st.inElection {
		st.inElection = true
		st.since = time.Now()
		if st.step == stepNone && !st.creating {
			c.restart()
		}
	}
}

// onCancel removes a waiter whose context ended; the last one withdraws.
func (c *Candidate) onCancel(req *campaignReq) {
	st := &c.st
	for i, w := range st.waiters {
		if w == req {
			st.waiters = append(st.waiters[:i], st.waiters[i+1:]...)
			req.reply <- campaignResult{err: req.ctx.Err()}
			if len(st.waiters) == 0 && st.lead == nil {
				c.withdraw()
			}
			return
		}
	}
	// Already answered (with a leadership); Campaign resigns it.
}

// onResign withdraws after a Resign of the current (or last) leadership.
func (c *Candidate) onResign(req *resignReq) {
	st := &c.st
	if st.lead != req.lead && (st.lead != nil || len(st.waiters) > 0) {
		req.reply <- nil // a stale leadership: the candidate moved on
		return
	}
	if st.lead == req.lead {
		c.endLead(ErrResigned)
	}
	c.withdraw()
	if len(st.waiters) > 0 { // a Campaign came after the resign: enter again
		st.inElection = true
		st.since = time.Now()
		c.restart()
		req.reply <- nil
		return
	}
	st.resigns = append(st.resigns, req.reply)
}

// onClose ends everything and withdraws, bounded by Close's deadline.
func (c *Candidate) onClose(req closeReq) {
	st := &c.st
	st.closing, st.closeRep = true, req.reply
	c.endLead(ErrClosed)
	c.failWaiters(ErrClosed)
	c.withdraw()
	st.closeTmr = time.AfterFunc(time.Until(req.deadline), func() { c.mb.post(closeLate{}) })
}

// withdraw leaves the election: delete our znode and sweep any other
// znode carrying our GUID.
func (c *Candidate) withdraw() {
	st := &c.st
	st.inElection = false
	st.gen++
	st.step = stepNone
	mine := ""
	if st.mine != "" {
		mine = c.full(st.mine)
		c.remove(mine) // the delete first: a successor waits on it
		c.setMine("")
	}
	if st.pred != "" {
		if mine != "" && st.cleanup[mine] {
			if st.dropAfter == nil {
				st.dropAfter = map[string]string{}
			}
			st.dropAfter[mine] = st.pred // removed behind the delete (onDeleted)
		} else {
			c.sess.conn.DropWatch(st.pred, c.sink)
		}
		st.pred = ""
	}
	st.swept = false
	c.restart()
}

// settle answers Resign and Close once the candidate has nothing left in
// ZooKeeper.
//
// A Resign is answered once the resigned znode and any duplicate are
// deleted, even if a Campaign has since put the candidate back in the
// election (its new znode is not the resigned one); Close waits until
// nothing of the candidate is left.
func (c *Candidate) settle() {
	st := &c.st
	deleted := len(st.cleanup) == 0 && (st.swept || !st.dupRisk)
	withdrawn := !st.inElection && st.mine == "" && !st.creating
	if st.gone || (deleted && (withdrawn || st.inElection)) {
		for _, r := range st.resigns {
			r <- nil
		}
		st.resigns = nil
	}
	if st.closing && (st.gone || (deleted && withdrawn)) {
		c.finish(nil)
	}
}

// finish answers Close; the loop then exits.
func (c *Candidate) finish(err error) {
	st := &c.st
	if st.closeRep == nil {
		return
	}
	if err != nil {
		c.log.Warn().Str("reason", "close_timeout").Msg("candidate closed before its znode deletion was confirmed")
	}
	st.closeRep <- err
	st.closeRep = nil
}

// failWaiters answers every waiting Campaign with err.
func (c *Candidate) failWaiters(err error) {
	for _, w := range c.st.waiters {
		w.reply <- campaignResult{err: err}
	}
	c.st.waiters = nil
}
