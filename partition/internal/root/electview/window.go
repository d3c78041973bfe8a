package electview

import "time"

// The read window: how many read requests the view keeps in flight at
// once on its session: whole reads of elections (at a start or relist)
// and batches of created candidates (one multiRead of up to candBatch
// getData each). ZooKeeper answers one session's requests in order, so
// requests in flight are pipelined on the connection; a fixed handful of
// single reads in flight bounds the reads to that many a round trip (4 at
// 2 ms: 2,000 a second, and a drain of 3,000 shards creates 3,000
// candidates to read), while too many make a loaded server's line longer
// for every session on it, the members' lease-renewing syncs among them.
// So the window follows the answers, as TCP's congestion control (and the
// members' election starts, partition/internal/shard's limiter) do: it
// grows by one for each request answered within a sixteenth of the
// session timeout, and halves, at most once per round trip, when one
// takes more than an eighth (a member's lease runs out once its syncs
// wait a third).

const (
	windowStart = 8  // requests in flight at the start
	windowMin   = 2  // the least it shrinks to
	windowMax   = 32 // the most
)

// window is the adaptive bound on reads in flight; one goroutine (the
// follower's) uses it.
type window struct {
	timeout func() time.Duration // the session timeout
	limit   int
	lastCut time.Time
}

func newWindow(timeout func() time.Duration) *window {
	return &window{timeout: timeout, limit: windowStart}
}

// answered adapts the bound to a read that took rtt, answered at now.
func (w *window) answered(rtt time.Duration, now time.Time) {
	t := w.timeout()
	switch {
	case rtt > t/8:
		if now.Sub(w.lastCut) >= rtt {
			w.limit = max(windowMin, w.limit/2)
			w.lastCut = now
		}
	case rtt < t/16:
		w.limit = min(windowMax, w.limit+1)
	}
}
