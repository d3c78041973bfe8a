package recipe

import (
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/watchdog"
	"github.com/zkelect/zkelect/internal/zkconn"
)

// handOver makes w (nil: none) the watchdog of s's sessions: the current
// one at once, each new one as it is established, and their ends.
func (s *Session) handOver(w *Watchdog) {
	s.handoffMu.Lock()
	defer s.handoffMu.Unlock()
	if s.handoff != nil {
		s.conn.Unsubscribe(s.handoff)
		s.handoff = nil
	}
	if w == nil {
		return
	}
	k := &handoffSink{s: s, w: w}
	id, _, closed := s.conn.Subscribe(k)
	if closed {
		return
	}
	s.handoff = k
	if id != 0 {
		k.SessionChanged(zkconn.Event{Kind: zkconn.Connected, ID: id})
	}
}

// watchdogOf returns the Watchdog s's sessions are handed to, or nil.
func (s *Session) watchdogOf() *Watchdog {
	s.handoffMu.Lock()
	defer s.handoffMu.Unlock()
	if s.handoff == nil {
		return nil
	}
	return s.handoff.w
}

// handoffSink tells a Watchdog about s's sessions, in the order of s's
// events (on go-zookeeper's receive goroutine; a pipe write does not block
// while the watchdog reads).
type handoffSink struct {
	s    *Session
	w    *Watchdog
	mu   sync.Mutex
	last int64 // the session handed over last
}

func (k *handoffSink) SessionChanged(ev zkconn.Event) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch ev.Kind {
	case zkconn.Connected:
		id, pw := k.s.conn.Credentials()
		if id != ev.ID || id == k.last || len(pw) == 0 {
			return // a reconnect of the same session, or one already replaced
		}
		if k.last != 0 {
			k.w.closedSession(k.last)
		}
		k.w.session(watchdog.Credentials{ID: id, Password: pw, Servers: k.s.dial.servers})
		k.last = id
	case zkconn.Expired, zkconn.Closed:
		if k.last != 0 {
			k.w.closedSession(k.last)
			k.last = 0
		}
	}
}

func (k *handoffSink) NodeChanged(zk.Event) {}
