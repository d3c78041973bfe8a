package recipe

import (
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/watchdog"
	"github.com/zkelect/zkelect/internal/zkconn"
)

// HandOver makes t the watchdog of s's sessions (package recipe/watchdog
// calls it; t's type is internal to this module): the current session at
// once, each new one as it is established (a new session after an
// expiry), and their ends, until s is closed; a nil t ends the handover.
// Siblings of s opened later are handed to t too. It returns an error
// wrapping watchdog.ErrTransport (recipe/watchdog.ErrTransport) for a
// session over TLS (WithTLS) or a custom dialer (WithDialer), handing
// nothing over, and ErrNilSession for a nil s.
func (s *Session) HandOver(t watchdog.Taker) error {
	if s == nil {
		return ErrNilSession
	}
	if t != nil && (s.cfg.tls != nil || s.cfg.customDialer) {
		return watchdog.ErrTransport
	}
	s.handoffMu.Lock()
	defer s.handoffMu.Unlock()
	if s.handoff != nil {
		s.conn.Unsubscribe(s.handoff)
		s.handoff = nil
	}
	if t == nil {
		return nil
	}
	k := &handoffSink{s: s, t: t}
	id, _, closed := s.conn.Subscribe(k)
	if closed {
		return nil
	}
	s.handoff = k
	if id != 0 {
		k.SessionChanged(zkconn.Event{Kind: zkconn.Connected, ID: id})
	}
	return nil
}

// takerOf returns the Taker s's sessions are handed to, or nil.
func (s *Session) takerOf() watchdog.Taker {
	s.handoffMu.Lock()
	defer s.handoffMu.Unlock()
	if s.handoff == nil {
		return nil
	}
	return s.handoff.t
}

// handoffSink tells a Taker about s's sessions, in the order of s's
// events (on go-zookeeper's receive goroutine; a pipe write does not block
// while the watchdog reads).
type handoffSink struct {
	s    *Session
	t    watchdog.Taker
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
			k.t.Closed(k.last)
		}
		k.t.Session(watchdog.Credentials{ID: id, Password: pw, Servers: k.s.dial.servers})
		k.last = id
	case zkconn.Expired, zkconn.Closed:
		if k.last != 0 {
			k.t.Closed(k.last)
			k.last = 0
		}
	}
}

func (k *handoffSink) NodeChanged(zk.Event) {}
