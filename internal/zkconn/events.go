package zkconn

import "github.com/go-zookeeper/zk"

// Sink receives session and node events. Both methods are called from
// go-zookeeper's receive goroutine with the Conn's lock held, and must not
// block or call back into the Conn.
type Sink interface {
	SessionChanged(ev Event)
	NodeChanged(ev zk.Event)
}

// Event is a change of the session as its users see it.
type Event struct {
	Kind EventKind
	ID   int64 // the session concerned
}

// EventKind is what happened to the session.
type EventKind uint8

const (
	Connected    EventKind = iota + 1 // usable (StateHasSession), ID is the session
	Disconnected                      // connection lost; the session may live on
	Expired                           // ID is the session that expired
	Closed                            // Conn.Close was called
)

// Subscribe registers k for session events and returns the current state,
// atomically with the registration. After Close it registers nothing and
// reports closed.
func (s *Conn) Subscribe(k Sink) (id int64, connected, closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.sinks[k] = struct{}{}
	}
	return s.id, s.connected, s.closed
}

// Unsubscribe removes k from session and node events, leaving the
// server's watches of its paths in place (see DropWatch).
func (s *Conn) Unsubscribe(k Sink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sinks, k)
	s.watches.unsubscribeLocked(k)
}

// onEvent is go-zookeeper's event callback; it runs on the library's
// receive goroutine and must not block.
func (s *Conn) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		s.nodeEvent(ev)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		s.establishedLocked()
	case zk.StateDisconnected:
		s.disconnectedLocked()
	case zk.StateExpired:
		s.expiredLocked()
	case zk.StateAuthFailed:
		s.log.Error().Int64("session_id", s.id).Msg("zookeeper authentication failed")
	}
}

// establishedLocked handles StateHasSession (s.mu held).
func (s *Conn) establishedLocked() {
	id := s.wire.sessionID.Load()
	if s.id != 0 && s.id != id {
		s.expiredLocked() // the ensemble forgot the old session
	}
	renewed := s.id == id
	s.id, s.connected = id, true
	s.estOnce.Do(func() { close(s.established) })
	s.state("connected")
	l := s.log.Info().Int64("session_id", id).Dur("timeout", s.wire.timeout())
	if renewed {
		l.Msg("session reconnected")
	} else {
		l.Msg("session established")
	}
	s.broadcast(Event{Kind: Connected, ID: id})
	s.wakeConnectsLocked()
}

// NextConnect returns a channel closed at the session's next Connected
// event after the call (a new session after an expiry, or the session
// resumed after a connection loss) or at Close. A retry loop takes it
// before an attempt and waits on it beside its backoff: a call that failed
// for want of a session is tried again the moment there is one, not after
// a pause sized for an ensemble that is down, and a connect that came
// while the attempt ran is not missed.
func (s *Conn) NextConnect() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connects
}

// wakeConnectsLocked closes the channel NextConnect returned, and gives
// the next callers a new one unless the Conn is closed (s.mu held).
func (s *Conn) wakeConnectsLocked() {
	close(s.connects)
	if !s.closed {
		s.connects = make(chan struct{})
	}
}

// disconnectedLocked handles StateDisconnected (s.mu held).
func (s *Conn) disconnectedLocked() {
	if !s.connected {
		return
	}
	s.connected = false
	s.watches.connectionLostLocked(zk.StateDisconnected, zk.ErrConnectionClosed)
	s.state("disconnected")
	s.log.Warn().Int64("session_id", s.id).Str("reason", "connection_lost").Msg("session disconnected")
	s.broadcast(Event{Kind: Disconnected, ID: s.id})
}

// expiredLocked reports the current session as expired (s.mu held).
func (s *Conn) expiredLocked() {
	if s.id == 0 {
		return
	}
	old := s.id
	s.id, s.connected = 0, false
	s.endBindingLocked(true)
	s.former = append(s.former[max(len(s.former)-maxFormer+1, 0):], old)
	s.watches.connectionLostLocked(zk.StateExpired, zk.ErrSessionExpired)
	if s.cfg.States != nil {
		s.cfg.States.SessionExpired()
	}
	s.state("expired")
	s.log.Warn().Int64("session_id", old).Str("reason", "session_expired").Msg("session expired")
	s.broadcast(Event{Kind: Expired, ID: old})
}

// broadcast sends ev to every sink (s.mu held).
func (s *Conn) broadcast(ev Event) {
	for k := range s.sinks {
		k.SessionChanged(ev)
	}
}

// nodeEvent routes a watch event to the sinks of its path.
func (s *Conn) nodeEvent(ev zk.Event) {
	if ev.Type == zk.EventNotWatching {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches.nodeChangedLocked(ev)
}
