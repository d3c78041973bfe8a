package zkconn

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"
)

// Conn is one ZooKeeper session over go-zookeeper's *zk.Conn. It reads the
// connection's events through a callback (go-zookeeper's event channel
// drops events when full) and fans session state and node events out to
// its Sinks. Only a session that is connected and established
// (go-zookeeper's StateHasSession) is usable; a change of session id means
// the previous session, and every ephemeral znode it owned, is gone.
// All methods are safe for concurrent use.
type Conn struct {
	conn   *zk.Conn
	events <-chan zk.Event
	wire   *wireTracker
	cfg    Config
	log    zerolog.Logger

	hosts      *serverList  // go-zookeeper's host provider (hosts.go)
	resolver   *resolver    // dials its entries (resolve.go)
	refusedTLS *tlsRefusals // servers that refused TLS (tlsrefusal.go)

	calls       inflight      // callers' calls in flight (Busy)
	established chan struct{} // closed at the first session
	estOnce     sync.Once
	done        chan struct{} // closed by Close
	closeOnce   sync.Once
	ended       chan struct{} // closed by Close or once every server refused the credentials (Ended)
	endOnce     sync.Once
	watchdog    chan struct{} // closed when watchRequests returns (deadline.go)
	renewing    chan struct{} // closed when renewLease returns (leaseclock.go)
	following   chan struct{} // closed when followConfig returns (reconfig.go)
	followCtx   context.Context
	followStop  context.CancelFunc
	dialCtx     context.Context // ends a pause between rounds (dialroute.go) at Close
	dialStop    context.CancelFunc

	mu        sync.Mutex
	over      chan struct{} // closed when session id expires, or at Close (binding, wirecall.go)
	id        int64         // current session id, 0 when none
	former    []int64       // earlier session ids, the latest last (at most maxFormer)
	connected bool          // StateHasSession and not since disconnected
	closed    bool
	connects  chan struct{} // closed at the next Connected event or at Close (NextConnect, events.go)
	sinks     map[Sink]struct{}
	watches   *watchTable // every server watch of the layer, and node events' routes
}

// Config configures Dial.
type Config struct {
	// Timeout is the session timeout to request; the server may grant
	// another (Conn.Timeout).
	Timeout time.Duration
	// ConnectTimeout bounds Dial's wait for the first session.
	ConnectTimeout time.Duration
	// Dialer makes the TCP connections (nil: net.DialTimeout), given an
	// address "ip:port": the layer resolves each server name at each
	// attempt (resolve.go); every connection it returns is wrapped by the
	// layer.
	Dialer zk.Dialer
	// Auth is replayed on every connection before any other request.
	Auth []Credential
	// TLS, if set, wraps every connection in TLS (see tlsdial.go).
	TLS *tls.Config
	// SASL, if set, logs every connection in with SASL DIGEST-MD5 before
	// any other request (see sasl.go).
	SASL *SASLCredential
	// Log receives the layer's log lines (zero value: none).
	Log zerolog.Logger
	// States, if set, is told every change of session state.
	States StateObserver
	// NoEnsembleTracking, if set, dials only servers: the members named in
	// /zookeeper/config are not added (reconfig.go). Set it where the
	// client reaches the ensemble only through the addresses it was given
	// (a load balancer, NodePort, NAT), or where the configuration's
	// writers are not trusted to point the client elsewhere.
	NoEnsembleTracking bool
}

// Credential is one AddAuth call: scheme ("digest") and its payload
// ("user:password").
type Credential struct{ Scheme, Auth string }

// StateObserver is told the session's state changes, on go-zookeeper's
// receive goroutine; it must not block.
type StateObserver interface {
	// SessionState reports the state now: "connected", "disconnected",
	// "expired" or "closed".
	SessionState(state string)
	// SessionExpired counts a session that expired (or that the ensemble
	// forgot).
	SessionExpired()
}

// Dial opens a ZooKeeper session on servers ("host:port" each, see
// CheckServers) and waits until the first session is established. It
// fails with a *ServersError, with an error wrapping ErrNoSession when the
// connect timeout passes, ctx ends (and ctx's error), every server answers
// in another protocol (and ErrNotZooKeeper), every server failed TLS for a
// reason of certificates once (and *TLSError, ErrTLS), or go-zookeeper refuses to
// start; or with the error of a credential the server refuses
// ("authenticate <scheme>: ..."). The Conn then reconnects by itself until
// Close; the caller must Close it.
func Dial(ctx context.Context, servers []string, cfg Config) (*Conn, error) {
	if err := CheckServers(servers); err != nil {
		return nil, err
	}
	if cfg.Dialer == nil {
		cfg.Dialer = net.DialTimeout
	}
	s := newConn(newWireTracker(len(servers), cfg.Timeout, cfg.Log), cfg)
	s.wire.sasl, s.wire.onRefused, s.wire.digest = cfg.SASL, s.authRefused, cfg.Auth
	s.hosts = newServerList(cfg.Log, s.dialCtx.Done())
	s.wire.onAnswer = s.hosts.answered
	s.refusedTLS = newTLSRefusals(s.hosts.servers)
	s.resolver = newResolver(s.dialCtx, s.isEstablished, cfg.Dialer, cfg.TLS, s.refusedTLS, cfg.Log)
	s.wire.probeDial = s.resolver.dialAddr
	s.resolver.avoid = s.wire.avoided
	conn, events, err := zk.Connect(servers, cfg.Timeout,
		zk.WithHostProvider(s.hosts),
		zk.WithDialer(s.wire.dialer(s.dialEntry)),
		zk.WithEventCallback(s.onEvent),
		zk.WithLogger(zkLogger{s.log}),
		zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoSession, err)
	}
	s.conn, s.events = conn, events
	if err := s.awaitFirst(ctx, servers); err != nil {
		s.abandon()
		return nil, err
	}
	for _, a := range cfg.Auth {
		if err := conn.AddAuth(a.Scheme, []byte(a.Auth)); err != nil {
			s.shutdown()
			return nil, fmt.Errorf("authenticate %s: %w", a.Scheme, err)
		}
	}
	s.wire.authExpected.Store(int32(len(cfg.Auth))) // replayed on every reconnect
	go s.watchRequests()
	go s.renewLease()
	go s.followConfig()
	return s, nil
}

func (s *Conn) awaitFirst(ctx context.Context, servers []string) error {
	t := time.NewTimer(s.cfg.ConnectTimeout)
	defer t.Stop()
	select {
	case <-s.established:
		return nil
	case <-t.C:
		if unresolved := s.resolver.unresolvedError(); unresolved != nil {
			return fmt.Errorf("no session from %v within %v: %w: %w", servers, s.cfg.ConnectTimeout, ErrNoSession, unresolved)
		}
		if foreign := s.wire.foreign.foreign(); foreign != nil {
			// Some servers answered with another protocol, the others not at all.
			return fmt.Errorf("no session from %v within %v: %w: %w", servers, s.cfg.ConnectTimeout, ErrNoSession, foreign)
		}
		return fmt.Errorf("no session from %v within %v: %w", servers, s.cfg.ConnectTimeout, ErrNoSession)
	case <-s.wire.auth.over:
		return s.wire.auth.cause()
	case <-s.refusedTLS.all:
		return fmt.Errorf("every server of %v refused TLS: %w: %w", s.hosts.servers(), ErrNoSession, s.refusedTLS.cause())
	case <-s.wire.foreign.all:
		return fmt.Errorf("%w: %w", ErrNoSession, s.wire.foreign.foreign())
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNoSession, ctx.Err())
	}
}

// Close ends the session: the server deletes its ephemeral znodes, sinks
// get a Closed event. It waits for the callers' calls (Busy) and
// go-zookeeper's goroutines to stop (bounded by the session timeout plus
// 2s) and is idempotent; it always returns nil.
func (s *Conn) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.connected = false
		s.watches.connectionLostLocked(zk.StateDisconnected, zk.ErrClosing)
		s.broadcast(Event{Kind: Closed, ID: s.id})
		s.wakeConnectsLocked()
		s.mu.Unlock()
		close(s.done)
		s.dialStop()
		s.endOnce.Do(func() { close(s.ended) })
		s.mu.Lock()
		s.endBindingLocked(false) // after done: a call it wakes fails with ErrClosed
		s.mu.Unlock()
		<-s.watchdog
		<-s.renewing
		s.stopFollowing()
		s.shutdown()
		s.resolver.close()
		s.state("closed")
		s.log.Info().Int64("session_id", s.ID()).Msg("session closed")
	})
	return nil
}

// abandon stops a session that never got established, promptly: it fails
// any handshake in progress instead of waiting for it. It then waits for
// go-zookeeper's Close, which gives an unanswered close request 1s (the
// request is lost when the connect loop has already stopped: a Dial
// refused within a round of attempts returns up to 1s later, and leaves
// no goroutine behind).
func (s *Conn) abandon() {
	s.dialStop()
	defer s.resolver.close()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		s.conn.Close()
	}()
	t := time.NewTimer(s.wire.timeout() + 2*time.Second)
	defer t.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for events := s.events; events != nil; {
		s.wire.closeCurrent()
		select {
		case _, ok := <-events:
			if !ok {
				events = nil
			}
		case <-tick.C:
		case <-t.C:
			return
		}
	}
	select {
	case <-closed:
	case <-t.C:
	}
}

// shutdown closes the session (go-zookeeper's Close waits up to 1s for the
// server to confirm), then the socket, and waits for its goroutines.
func (s *Conn) shutdown() {
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

// newConn returns a Conn over wire with its routing tables and watch
// table, before any connection.
func newConn(wire *wireTracker, cfg Config) *Conn {
	s := &Conn{
		wire:        wire,
		watchdog:    make(chan struct{}),
		renewing:    make(chan struct{}),
		following:   make(chan struct{}),
		cfg:         cfg,
		log:         cfg.Log,
		established: make(chan struct{}),
		done:        make(chan struct{}),
		over:        make(chan struct{}),
		connects:    make(chan struct{}),
		ended:       make(chan struct{}),
		sinks:       map[Sink]struct{}{},
		watches:     newWatchTable(wire),
	}
	s.followCtx, s.followStop = context.WithCancel(context.Background())
	s.dialCtx, s.dialStop = context.WithCancel(context.Background())
	return s
}

// ID returns the current session id, or 0 while there is none (before the
// first session, after expiry until the next one, after Close).
func (s *Conn) ID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Credentials returns the current session's id and password, as the server
// granted them in the last connect response (0 and nil before any): what
// another process needs to close the session on this one's behalf
// (CloseSession, zkelect's watchdog). Keep the password as secret as the
// session.
func (s *Conn) Credentials() (id int64, password []byte) { return s.wire.credentials() }

// Timeout returns the session timeout the server granted (the requested
// one before the first session).
func (s *Conn) Timeout() time.Duration { return s.wire.timeout() }

// LeaseDeadline returns the instant on the monotonic clock before which
// the server cannot have expired session id: the latest instant the
// quorum leader is known to have heard of it (a connect response, an
// answered sync; see leaseclock.go) plus the negotiated session timeout.
// ok is false while nothing vouches for that session: before any answer,
// and once another session (a new one after an expiry) earned the lease.
func (s *Conn) LeaseDeadline(id int64) (time.Time, bool) { return s.wire.leaseDeadline(id) }

// AnswerLag returns how long ago the request ZooKeeper answered last was
// sent (pings and the lease's syncs included); the session timeout before
// any answer.
func (s *Conn) AnswerLag() time.Duration {
	t, ok := s.wire.lastAnswer()
	if !ok {
		return s.Timeout()
	}
	return max(time.Since(t), 0)
}

// maxFormer is how many earlier session ids a Conn remembers (HeldBefore).
const maxFormer = 16

// HeldBefore reports whether id is one of the last 16 sessions this Conn
// held before its current one (0 never is).
func (s *Conn) HeldBefore(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return id != 0 && slices.Contains(s.former, id)
}

// LastZxid returns the highest zxid any reply of this session carried
// (go-zookeeper's and the layer's); reconnects present it.
func (s *Conn) LastZxid() int64 { return s.wire.lastZxid.Load() }

// ZK returns go-zookeeper's connection, the escape hatch for tools. Calls
// made on it bypass the layer's contexts, error table and lease.
func (s *Conn) ZK() *zk.Conn { return s.conn }

// Done returns a channel closed when Close is called.
func (s *Conn) Done() <-chan struct{} { return s.done }

// Usable reports whether the session is connected and established now,
// and its id. It is advice: the connection may drop right after.
func (s *Conn) Usable() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id, s.connected && !s.closed
}

// Busy counts a caller's call in flight until the returned release is
// called; Close waits for every release (bounded).
func (s *Conn) Busy() (release func()) {
	s.calls.add()
	var once sync.Once
	return func() { once.Do(s.calls.done) }
}

// isClosed reports whether Close was called.
func (s *Conn) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// state reports a state change to the observer, if any.
func (s *Conn) state(st string) {
	if s.cfg.States != nil {
		s.cfg.States.SessionState(st)
	}
}

// xidLogFormat is the line go-zookeeper v1.0.4 logs for a reply with a
// negative xid other than a ping's or a notification's: for every reply to
// one of the layer's requests.
const xidLogFormat = "Xid < 0 (%d) but not ping or watcher event"

// zkLogger sends go-zookeeper's own log lines to zerolog at debug level,
// but for the line it writes for every reply to one of the layer's own
// requests (their xids are negative by design, see wirecall.go).
type zkLogger struct{ l zerolog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	if format == xidLogFormat && len(args) == 1 {
		if xid, ok := args[0].(int32); ok && isLayerXid(xid) {
			return
		}
	}
	z.l.Debug().Str("component", "go-zookeeper").Msgf(format, args...)
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
