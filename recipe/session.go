package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Session is one ZooKeeper session shared by any number of candidates and
// observers. It owns one *zk.Conn, reads its events through a callback (the
// library's event channel drops events when full), and fans session state out
// to every candidate. Only a session that is connected and established
// (go-zookeeper's StateHasSession) is usable; a change of session id means the
// previous session, and every ephemeral znode it owned, is gone.
//
// go-zookeeper re-establishes a new session by itself after expiry; the
// Session reports that to candidates as an expiry followed by a new session.
// A connection whose server answers no request for longer than the
// negotiated session timeout while one is in flight is closed, so the
// session moves to another server (see the package documentation,
// "Request deadline").
// All methods are safe for concurrent use.
type Session struct {
	conn    *zk.Conn
	events  <-chan zk.Event
	wire    *wireTracker
	cfg     sessionConfig
	log     zerolog.Logger
	metrics *metrics
	dial    dialArgs // what Connect was given, for Sibling

	calls       inflight      // candidates' ZooKeeper calls in flight
	established chan struct{} // closed at the first session
	estOnce     sync.Once
	done        chan struct{} // closed by Close
	closeOnce   sync.Once
	watchdog    chan struct{} // closed when watchRequests returns (deadline.go)
	renewing    chan struct{} // closed when renewLease returns (leaseclock.go)
	leaseWait   leaseWait     // candidates waiting for their lease (leasewait.go)

	mu        sync.Mutex
	id        int64   // current session id, 0 when none
	former    []int64 // earlier session ids, the latest last (at most maxFormer)
	connected bool    // StateHasSession and not since disconnected
	closed    bool
	sinks     map[sessionSink]struct{}
	paths     map[string]map[sessionSink]struct{}
	watched   map[sessionSink]map[string]struct{} // paths per sink, so unsubscribe costs O(own paths)
	dataWatch map[string]bool                     // paths that may hold a data watch set by readWatched
	watches   *watchTable                         // one-shot watches of GetW, ChildrenW, ExistsW
}

// sessionSink receives session and node events. Both methods are called from
// go-zookeeper's receive goroutine and must not block.
type sessionSink interface {
	sessionChanged(ev sessionEvent)
	nodeChanged(ev zk.Event)
}

// sessionEvent is a change of the session as candidates see it.
type sessionEvent struct {
	kind sessionEventKind
	id   int64 // the session concerned
}

type sessionEventKind uint8

const (
	sessConnected    sessionEventKind = iota + 1 // usable (StateHasSession), id is the session
	sessDisconnected                             // connection lost; the session may live on
	sessExpired                                  // id is the session that expired
	sessClosed                                   // Session.Close was called
)

// Connect opens a ZooKeeper session on servers ("host:port" each, port in
// 1..65535; otherwise a *OptionError naming "servers") and waits until the
// first session is established, the connect timeout passes
// (ErrUnreachable), every server answers in another protocol
// (ErrNotZooKeeper, with ErrUnreachable) or ctx ends (ctx's error, with
// ErrUnreachable). Nil options are ignored. The session then reconnects by
// itself until Close; the caller must Close it.
func Connect(ctx context.Context, servers []string, opts ...SessionOption) (*Session, error) {
	if err := validateServers(servers); err != nil {
		return nil, err
	}
	cfg := defaultSessionConfig()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	s := newSession(newWireTracker(len(servers), cfg.timeout, cfg.log), cfg)
	s.dial = dialArgs{servers: slices.Clone(servers), opts: slices.Clone(opts)}
	s.wire.tls, s.wire.sasl, s.wire.onRefused = cfg.tls, cfg.sasl, s.authRefused
	conn, events, err := zk.Connect(servers, cfg.timeout,
		zk.WithDialer(s.wire.dialer(cfg.dialer)),
		zk.WithEventCallback(s.onEvent),
		zk.WithLogger(zkLogger{s.log}),
		zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("connect to %v: %w: %w", servers, ErrUnreachable, err)
	}
	s.conn, s.events = conn, events
	if err := s.awaitFirst(ctx, servers); err != nil {
		s.abandon()
		return nil, err
	}
	for _, a := range cfg.auth {
		if err := conn.AddAuth(a.scheme, []byte(a.auth)); err != nil {
			s.shutdown()
			return nil, aclError("authenticate", a.scheme, err)
		}
	}
	s.wire.authExpected.Store(int32(len(cfg.auth))) // replayed on every reconnect
	if got := s.Timeout(); got != cfg.timeout {
		if cfg.exactTimeout {
			s.shutdown()
			return nil, &SessionTimeoutError{Requested: cfg.timeout, Negotiated: got}
		}
		s.log.Warn().Dur("requested", cfg.timeout).Dur("negotiated", got).
			Msg("server granted another session timeout; deadlines use the negotiated one")
	}
	go s.watchRequests()
	go s.renewLease()
	s.metrics.trackSession(s, true)
	return s, nil
}

func (s *Session) awaitFirst(ctx context.Context, servers []string) error {
	t := time.NewTimer(s.cfg.connectTimeout)
	defer t.Stop()
	select {
	case <-s.established:
		return nil
	case <-t.C:
		if foreign := s.wire.foreign.foreign(); foreign != nil {
			// Some servers answered with another protocol, the others not at all.
			return fmt.Errorf("no session from %v within %v: %w: %w", servers, s.cfg.connectTimeout, ErrUnreachable, foreign)
		}
		return fmt.Errorf("no session from %v within %v: %w", servers, s.cfg.connectTimeout, ErrUnreachable)
	case <-s.wire.auth.over:
		return fmt.Errorf("connect to %v: %w", servers, s.wire.auth.cause())
	case <-s.wire.foreign.all:
		return fmt.Errorf("connect to %v: %w: %w", servers, ErrUnreachable, s.wire.foreign.foreign())
	case <-ctx.Done():
		return fmt.Errorf("connect to %v: %w: %w", servers, ErrUnreachable, ctx.Err())
	}
}

// Close ends the session: its ephemeral znodes are deleted by the server,
// candidates using it end their leadership with ErrClosed. It waits for
// go-zookeeper's goroutines to stop (bounded by the session timeout plus 2s)
// and is idempotent; it always returns nil.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.metrics.trackSession(s, false)
		s.mu.Lock()
		s.closed = true
		s.connected = false
		s.broadcast(sessionEvent{kind: sessClosed, id: s.id})
		s.mu.Unlock()
		close(s.done)
		s.closeLeaseWait()
		<-s.watchdog
		<-s.renewing
		s.shutdown()
		s.metrics.setSessionState("closed")
		s.log.Info().Int64("session_id", s.ID()).Msg("session closed")
	})
	return nil
}

// abandon stops a session that never got established, promptly: it fails
// any handshake in progress instead of waiting for it, and does not wait
// for go-zookeeper's Close (which gives an unanswered close request 1s;
// the goroutine calling it ends by then).
func (s *Session) abandon() {
	go s.conn.Close()
	t := time.NewTimer(s.wire.timeout() + 2*time.Second)
	defer t.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		s.wire.closeCurrent()
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-tick.C:
		case <-t.C:
			return
		}
	}
}

// shutdown closes the session (go-zookeeper's Close waits up to 1s for the
// server to confirm), then the socket, and waits for its goroutines.
func (s *Session) shutdown() {
	s.conn.Close()
	s.wire.closeCurrent() // the close is answered or given up: no need to read on
	t := time.NewTimer(s.wire.timeout() + 2*time.Second)
	defer t.Stop()
	select { // every call now fails fast: the connection is closed
	case <-s.calls.idle():
	case <-t.C:
		s.log.Warn().Msg("zookeeper calls still in flight after close")
	}
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-t.C:
			s.log.Warn().Msg("zookeeper connection goroutines still running after close")
			return
		}
	}
}

// newSession returns a Session over wire with its routing tables and
// watch table, before any connection.
func newSession(wire *wireTracker, cfg sessionConfig) *Session {
	s := &Session{
		wire:        wire,
		watchdog:    make(chan struct{}),
		renewing:    make(chan struct{}),
		cfg:         cfg,
		log:         cfg.log,
		metrics:     newMetrics(cfg.reg),
		established: make(chan struct{}),
		done:        make(chan struct{}),
		sinks:       map[sessionSink]struct{}{},
		paths:       map[string]map[sessionSink]struct{}{},
		watched:     map[sessionSink]map[string]struct{}{},
		dataWatch:   map[string]bool{},
	}
	s.watches = newWatchTable(s)
	s.sinks[s.watches] = struct{}{}
	return s
}

// ID returns the current session id, or 0 while there is none (before the
// first session, after expiry until the next one, after Close).
func (s *Session) ID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// maxFormer is how many earlier session ids a Session remembers
// (HeldBefore).
const maxFormer = 16

// HeldBefore reports whether id is one of the last 16 sessions this Session
// held before its current one. ZooKeeper may keep such a session alive a
// while after the Session moved on (until its timeout passes without the
// Session, or while its closing is committed), with the ephemeral znodes it
// owned: a znode of this process owned by such a session is the process's
// own, not another live process's (partition's member registration relies
// on that). 0 is never held.
func (s *Session) HeldBefore(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return id != 0 && slices.Contains(s.former, id)
}

// Timeout returns the session timeout the server granted (the requested
// one before the first session).
func (s *Session) Timeout() time.Duration { return s.wire.timeout() }

// AnswerLag returns how long ago the request ZooKeeper answered last was
// sent (pings included): about a round trip on a prompt connection, and at
// most a sixth of the session timeout plus a round trip when idle, since
// the session sends a sync that often for its lease; it grows while
// requests wait in line behind others or the server is slow. Callers that
// pipeline many requests (the partition manager) use it to keep the line
// short enough for the lease, which holds only while the syncs in that
// line are answered within the session timeout minus the lease margin,
// minus half the timeout (how far back an answered sync vouches for the
// session, and how often one is sent; see the package documentation).
// Before any answer it returns the session timeout.
func (s *Session) AnswerLag() time.Duration {
	t, ok := s.wire.lastAnswer()
	if !ok {
		return s.Timeout()
	}
	return max(time.Since(t), 0)
}

// Conn returns the underlying connection, for fencing guards and tools.
// Do not Close it; close the Session.
func (s *Session) Conn() *zk.Conn { return s.conn }

// Logger returns the session's logger (a no-op logger by default).
func (s *Session) Logger() zerolog.Logger { return s.log }

// Registerer returns the Registerer given with WithMetrics, or nil.
func (s *Session) Registerer() prometheus.Registerer { return s.cfg.reg }

// Done returns a channel closed when Close is called.
func (s *Session) Done() <-chan struct{} { return s.done }

// Connected reports whether the session is connected and established now
// (go-zookeeper's StateHasSession). It is advice: the connection may drop
// right after.
func (s *Session) Connected() bool {
	_, ok := s.usable()
	return ok
}

// usable reports whether the session is connected and established, and
// its id.
func (s *Session) usable() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id, s.connected && !s.closed
}

// leaseDeadline returns the local lease deadline for a margin: the instant
// on the monotonic clock before which the server cannot have expired the
// session, minus margin. ok is false if no request was ever answered.
func (s *Session) leaseDeadline(margin time.Duration) (time.Time, bool) {
	d, ok := s.wire.leaseDeadline()
	return d.Add(-margin), ok
}

// subscribe registers k for session events and returns the current state,
// atomically with the registration.
func (s *Session) subscribe(k sessionSink) (id int64, connected, closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.sinks[k] = struct{}{}
	}
	return s.id, s.connected, s.closed
}

// unsubscribe removes k from session and node events.
func (s *Session) unsubscribe(k sessionSink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sinks, k)
	for p := range s.watched[k] {
		s.unroute0(p, k)
	}
	delete(s.watched, k)
}

// watchPath routes node events of path to k until unwatchPath.
func (s *Session) watchPath(path string, k sessionSink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.paths[path]
	if m == nil {
		m = map[sessionSink]struct{}{}
		s.paths[path] = m
	}
	m[k] = struct{}{}
	own := s.watched[k]
	if own == nil {
		own = map[string]struct{}{}
		s.watched[k] = own
	}
	own[path] = struct{}{}
}

// unwatchPath stops routing node events of path to k.
func (s *Session) unwatchPath(path string, k sessionSink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unroute0(path, k)
	if own := s.watched[k]; own != nil {
		delete(own, path)
		if len(own) == 0 {
			delete(s.watched, k)
		}
	}
}

// unroute0 stops routing node events of path to k (s.mu held).
func (s *Session) unroute0(path string, k sessionSink) {
	if m := s.paths[path]; m != nil {
		delete(m, k)
		if len(m) == 0 {
			delete(s.paths, path)
		}
	}
}

// onEvent is go-zookeeper's event callback; it runs on the library's
// goroutines and must not block.
func (s *Session) onEvent(ev zk.Event) {
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
		s.established0()
	case zk.StateDisconnected:
		s.disconnected0()
	case zk.StateExpired:
		s.expired0()
	case zk.StateAuthFailed:
		s.log.Error().Int64("session_id", s.id).Msg("zookeeper authentication failed")
	}
}

// established0 handles StateHasSession (s.mu held).
func (s *Session) established0() {
	id := s.wire.sessionID.Load()
	if s.id != 0 && s.id != id {
		s.expired0() // the ensemble forgot the old session
	}
	renewed := s.id == id
	s.id, s.connected = id, true
	s.estOnce.Do(func() { close(s.established) })
	s.metrics.setSessionState("connected")
	l := s.log.Info().Int64("session_id", id).Dur("timeout", s.wire.timeout())
	if renewed {
		l.Msg("session reconnected")
	} else {
		l.Msg("session established")
	}
	s.broadcast(sessionEvent{kind: sessConnected, id: id})
}

// disconnected0 handles StateDisconnected (s.mu held).
func (s *Session) disconnected0() {
	if !s.connected {
		return
	}
	s.connected = false
	clear(s.dataWatch) // the server drops a connection's watches
	s.metrics.setSessionState("disconnected")
	s.log.Warn().Int64("session_id", s.id).Str("reason", "connection_lost").Msg("session disconnected")
	s.broadcast(sessionEvent{kind: sessDisconnected, id: s.id})
}

// expired0 reports the current session as expired (s.mu held).
func (s *Session) expired0() {
	if s.id == 0 {
		return
	}
	old := s.id
	s.id, s.connected = 0, false
	s.former = append(s.former[max(len(s.former)-maxFormer+1, 0):], old)
	clear(s.dataWatch)
	s.metrics.sessionExpired()
	s.metrics.setSessionState("expired")
	s.log.Warn().Int64("session_id", old).Str("reason", "session_expired").Msg("session expired")
	s.broadcast(sessionEvent{kind: sessExpired, id: old})
}

// broadcast sends ev to every sink (s.mu held).
func (s *Session) broadcast(ev sessionEvent) {
	for k := range s.sinks {
		k.sessionChanged(ev)
	}
}

// nodeEvent routes a watch event to the sinks of its path.
func (s *Session) nodeEvent(ev zk.Event) {
	if ev.Type == zk.EventNotWatching {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dataWatchFired(ev)
	for k := range s.paths[ev.Path] {
		k.nodeChanged(ev)
	}
}

// zkLogger sends go-zookeeper's own log lines to zerolog at debug level.
type zkLogger struct{ l zerolog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug().Str("component", "go-zookeeper").Msgf(format, args...)
}

// errSessionGone reports whether err means the session is closed for good.
func errSessionGone(err error) bool {
	return errors.Is(err, zk.ErrClosing) || errors.Is(err, ErrSessionClosed)
}

// inflight counts calls in flight; idle returns a channel closed when none
// is. Unlike a WaitGroup it may be waited on while calls still start.
type inflight struct {
	mu   sync.Mutex
	n    int
	zero chan struct{}
}

func (f *inflight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inflight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 && f.zero != nil {
		close(f.zero)
		f.zero = nil
	}
}

func (f *inflight) idle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if f.zero == nil {
		f.zero = make(chan struct{})
	}
	return f.zero
}
