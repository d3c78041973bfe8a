package root

import "time"

// countLogEvery is how often a changing count is logged again.
const countLogEvery = time.Minute

// countLog decides when a count of ignored znodes (persistent znodes under
// members, members or records over the bounds) is logged: the first time
// it is above zero, then when it changes, at most once every
// countLogEvery; never while it stays the same, nor at zero. Thousands of
// such znodes make one line, not one each, however often the children
// change. One goroutine owns a countLog.
type countLog struct {
	last int       // the count logged last; 0 after a zero count
	at   time.Time // when
}

// note reports whether count is to be logged at now, and records it if so.
func (c *countLog) note(count int, now time.Time) bool {
	switch {
	case count == c.last:
		return false
	case count == 0:
		c.last = 0
		return false
	case !c.at.IsZero() && now.Sub(c.at) < countLogEvery:
		return false
	}
	c.last, c.at = count, now
	return true
}
