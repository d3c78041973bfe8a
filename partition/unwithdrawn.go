package partition

import "errors"

// unwithdrawn counts the shards whose candidate a stopping member could
// not withdraw (its znode delete unconfirmed within the close timeout, as
// with ZooKeeper out of reach): the server deletes those znodes when the
// session ends. Only the loop goroutine uses it.
type unwithdrawn struct {
	n     int
	first error
}

// add counts one shard whose candidate's Close failed with err.
func (u *unwithdrawn) add(err error) {
	if u.n == 0 {
		u.first = err
	}
	u.n++
}

// reportStop logs what a stop could not finish in one line, not one a
// shard: the final record (recErr), the member znode (unregErr) and the
// candidates not withdrawn. Nothing is logged when all went well.
func (l *loop) reportStop(recErr, unregErr error) {
	u := &l.unwithdrawn
	if u.n == 0 && recErr == nil && unregErr == nil {
		return
	}
	var errs []error
	if recErr != nil {
		errs = append(errs, errors.New("final member record not written: "+recErr.Error()))
	}
	if unregErr != nil {
		errs = append(errs, unregErr)
	}
	if u.n > 0 {
		errs = append(errs, u.first)
	}
	l.m.log.Warn().Int("shards_not_withdrawn", u.n).Err(errors.Join(errs...)).
		Msg("stopped without finishing its farewell (ZooKeeper unreachable?); ZooKeeper deletes the session's znodes when the session ends")
}
