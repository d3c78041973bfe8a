package zkelectd

import (
	"fmt"
	"sync"
	"time"
)

// stopSlack is how long past --grace a stopping child may take to be
// reaped (the SIGKILL and the wait) before /healthz fails.
const stopSlack = time.Second

// ChildHealth is the daemon's own /healthz rule (a zkelecthttp.Check),
// beside zkelecthttp's session rule: an error naming the child when a
// shard's --exec child is still running more than --grace (plus stopSlack)
// after its leadership ended (a stop that does not take), else nil.
func (w *ShardWork) ChildHealth() error {
	if c, ok := w.overdueStop(w.grace + stopSlack); ok {
		return fmt.Errorf("child pid %d of shard %s still running %v after its leadership ended (--grace %v)",
			c.pid, c.shard, time.Since(c.since).Round(time.Millisecond), w.grace)
	}
	return nil
}

// stoppingChild is a shard child whose leadership ended and which has not
// been reaped yet.
type stoppingChild struct {
	shard string
	pid   int
	since time.Time
}

// stops tracks the children being stopped.
type stops struct {
	mu  sync.Mutex
	all map[int]stoppingChild // by pid
}

func (s *stops) begin(shard string, pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.all == nil {
		s.all = map[int]stoppingChild{}
	}
	s.all[pid] = stoppingChild{shard: shard, pid: pid, since: time.Now()}
}

func (s *stops) end(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.all, pid)
}

// overdue returns a child stopping for longer than d, if any.
func (s *stops) overdue(d time.Duration) (stoppingChild, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.all {
		if time.Since(c.since) > d {
			return c, true
		}
	}
	return stoppingChild{}, false
}
