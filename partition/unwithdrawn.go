package partition

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
