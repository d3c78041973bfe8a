package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/zkelect/zkelect/recipe"
)

// stopSlack is how long past --grace a stopping child may take to be
// reaped (the SIGKILL and the wait) before /healthz fails.
const stopSlack = time.Second

// daemonHealth decides /healthz, as client-go's HealthzAdaptor does for a
// leader that stopped renewing: the daemon is unhealthy (a restart would
// help) when its session's lease ran out: nothing proved for a whole
// session timeout that ZooKeeper's quorum leader still hears of it
// (disconnected, a server that stopped answering, or one cut off from the
// quorum leader), when the session expired and no new one replaced it yet, or
// when a shard's --exec child is still running more than --grace after its
// leadership ended (a stop that does not take).
type daemonHealth struct {
	sess  *recipe.Session
	work  *shardWork
	grace time.Duration
}

// Healthy returns nil, or why the daemon is not.
func (h *daemonHealth) Healthy() error {
	switch {
	case h.sess.ID() == 0:
		return fmt.Errorf("session expired and not replaced yet")
	case h.sess.LeaseRemaining() == 0:
		return fmt.Errorf("lease ran out: ZooKeeper's quorum leader vouched for the session within no session timeout (%v): disconnected, or its server cut off from the quorum", h.sess.Timeout())
	}
	if c, ok := h.work.overdueStop(h.grace + stopSlack); ok {
		return fmt.Errorf("child pid %d of shard %s still running %v after its leadership ended (--grace %v)",
			c.pid, c.shard, time.Since(c.since).Round(time.Millisecond), h.grace)
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
