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

	"github.com/zkelect/zkelect/internal/zkconn"
)

// Session is one ZooKeeper session shared by any number of candidates and
// observers. It fans session state out to every candidate; only a session
// that is connected and established is usable, and a change of session id
// means the previous session, and every ephemeral znode it owned, is gone.
//
// go-zookeeper re-establishes a new session by itself after expiry; the
// Session reports that to candidates as an expiry followed by a new session.
// A connection whose server answers no request for longer than the
// negotiated session timeout while one is in flight is closed, so the
// session moves to another server (see the package documentation,
// "Request deadline").
//
// Besides elections, a Session offers ZooKeeper's operations with a
// context (Get, Children, Exists, Create, Delete, Set, Multi, Sync and the
// watched GetW, ChildrenW, ExistsW): the packages of this module reach
// ZooKeeper only through them. Conn is the escape hatch to go-zookeeper.
// All methods are safe for concurrent use.
type Session struct {
	conn    *zkconn.Conn
	cfg     sessionConfig
	log     zerolog.Logger
	metrics *metrics
	dial    dialArgs // what Connect was given, for Sibling

	leaseWait leaseWait     // candidates waiting for their lease (lease.go)
	leases    leaseGuard    // the leaderships' leases (leaseguard.go)
	creates   createBatcher // batched candidate creates (createbatch.go)

	// ctx ends at Close: the context of the candidates' own ZooKeeper
	// calls, which may outlive their candidate but not the session.
	ctx    context.Context
	cancel context.CancelFunc

	handoffMu sync.Mutex
	handoff   *handoffSink // the watchdog's sink, nil when none (sessionhandoff.go)
}

// Connect opens a ZooKeeper session on servers ("host:port" each, port in
// 1..65535; otherwise a *OptionError naming "servers") and waits until the
// first session is established, the connect timeout passes
// (ErrUnreachable), every server answers in another protocol
// (ErrNotZooKeeper, with ErrUnreachable) or ctx ends (ctx's error, with
// ErrUnreachable). Nil options are ignored. The session then reconnects by
// itself until Close; the caller must Close it.
func Connect(ctx context.Context, servers []string, opts ...SessionOption) (*Session, error) {
	if err := zkconn.CheckServers(servers); err != nil {
		var se *zkconn.ServersError
		errors.As(err, &se)
		return nil, &OptionError{Option: "servers", Reason: se.Reason}
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
	s := &Session{cfg: cfg, log: cfg.log, metrics: newMetrics(cfg.reg),
		dial: dialArgs{servers: slices.Clone(servers), opts: slices.Clone(opts)}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	auth := make([]zkconn.Credential, 0, len(cfg.auth))
	for _, a := range cfg.auth {
		auth = append(auth, zkconn.Credential{Scheme: a.scheme, Auth: a.auth})
	}
	conn, err := zkconn.Dial(ctx, servers, zkconn.Config{
		Timeout: cfg.timeout, ConnectTimeout: cfg.connectTimeout, Dialer: cfg.dialer,
		Auth: auth, TLS: cfg.tls, SASL: cfg.sasl, Log: cfg.log, States: stateMetrics{s.metrics},
		NoEnsembleTracking: cfg.noTracking,
	})
	if err != nil {
		s.cancel()
		return nil, connectError(servers, err)
	}
	s.conn = conn
	s.creates.conn = conn
	if got := s.Timeout(); got != cfg.timeout {
		if cfg.exactTimeout {
			_ = s.Close()
			return nil, &SessionTimeoutError{Requested: cfg.timeout, Negotiated: got}
		}
		s.log.Warn().Dur("requested", cfg.timeout).Dur("negotiated", got).
			Msg("server granted another session timeout; deadlines use the negotiated one")
	}
	s.metrics.trackSession(s, true)
	return s, nil
}

// connectError maps an error of the layer's Dial to Connect's.
func connectError(servers []string, err error) error {
	switch {
	case errors.Is(err, zkconn.ErrAuthFailed) && !errors.Is(err, zkconn.ErrNoSession):
		return fmt.Errorf("connect to %v: %w", servers, err)
	case errors.Is(err, zkconn.ErrNoSession):
		return fmt.Errorf("connect to %v: %w: %w", servers, ErrUnreachable, fromLayer(err))
	case errors.Is(err, zk.ErrNoAuth), errors.Is(err, zk.ErrInvalidACL), errors.Is(err, zk.ErrAuthFailed):
		return fmt.Errorf("%w: %w", ErrACLDenied, err)
	}
	return fromLayer(err)
}

// Close ends the session: its ephemeral znodes are deleted by the server,
// candidates using it end their leadership with ErrClosed. It waits for
// go-zookeeper's goroutines to stop (bounded by the session timeout plus
// 2s) and is idempotent; it always returns nil.
func (s *Session) Close() error {
	s.metrics.trackSession(s, false)
	s.closeLeaseWait()
	err := s.conn.Close() // candidates see ErrSessionClosed before their calls' ctx ends
	s.closeLeases()       // after: until the candidates' loops end their leaderships, their leases are checked
	s.cancel()
	return err
}

// Ended returns a channel closed when the session can never be had again:
// Close was called, or the ensemble as a whole refused its SASL
// credentials (six refusals in a row and two per server listed, none
// accepted between them; at Connect one per server listed: a single
// server's refusal only moves the session to the others, even behind one
// address), or a server answered that it requires
// a SASL login the session did not make (SESSIONCLOSEDREQUIRESASLAUTH).
// EndErr says which.
func (s *Session) Ended() <-chan struct{} { return s.conn.Ended() }

// EndErr returns why the session ended for good: an *AuthError of the last
// refusal (errors.Is(err, ErrAuthFailed)) when every server refused the
// credentials, or of the answer requiring a SASL login (its message names
// SESSIONCLOSEDREQUIRESASLAUTH (-124)), ErrSessionClosed after Close, nil
// while it has not.
func (s *Session) EndErr() error {
	err := s.conn.EndErr()
	if errors.Is(err, zkconn.ErrClosed) {
		return ErrSessionClosed
	}
	return err
}

// ID returns the current session id, or 0 while there is none (before the
// first session, after expiry until the next one, after Close).
func (s *Session) ID() int64 { return s.conn.ID() }

// Timeout returns the session timeout the server granted (the requested
// one before the first session).
func (s *Session) Timeout() time.Duration { return s.conn.Timeout() }

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
func (s *Session) AnswerLag() time.Duration { return s.conn.AnswerLag() }

// HeldBefore reports whether id is one of the last 16 sessions this Session
// held before its current one. ZooKeeper may keep such a session alive a
// while after the Session moved on (until its timeout passes without the
// Session, or while its closing is committed), with the ephemeral znodes it
// owned: a znode of this process owned by such a session is the process's
// own, not another live process's (partition's member registration relies
// on that). 0 is never held.
func (s *Session) HeldBefore(id int64) bool { return s.conn.HeldBefore(id) }

// Conn returns go-zookeeper's connection under the session: an escape
// hatch for tools and tests. Calls made on it take no context, bypass the
// session's error classification and are not ordered with the session's
// own requests; the packages of this module do not use it. Do not Close
// it; close the Session.
func (s *Session) Conn() *zk.Conn { return s.conn.ZK() }

// Logger returns the session's logger (a no-op logger by default).
func (s *Session) Logger() zerolog.Logger { return s.log }

// Registerer returns the Registerer given with WithMetrics, or nil.
func (s *Session) Registerer() prometheus.Registerer { return s.cfg.reg }

// Done returns a channel closed when Close is called.
func (s *Session) Done() <-chan struct{} { return s.conn.Done() }

// NextConnect returns a channel closed when the session next connects
// after the call (a new session after an expiry, or the session resumed
// after a connection loss) or at Close. Take it before an attempt and
// wait on it beside the retry's backoff: a call that failed for want of a
// session is retried the moment one is there, not after a pause sized for
// an ensemble that is down (partition's retry loops do). Taken once the
// session is closed, it is a channel never closed (nil): nothing connects
// again, and a loop that takes it after each failed attempt pauses by its
// backoff instead of spinning until its own end.
func (s *Session) NextConnect() <-chan struct{} {
	if s.isClosed() {
		return nil
	}
	return s.conn.NextConnect()
}

// Connected reports whether the session is connected and established now
// (go-zookeeper's StateHasSession). It is advice: the connection may drop
// right after.
func (s *Session) Connected() bool {
	_, ok := s.conn.Usable()
	return ok
}

// leaseDeadline returns the local lease deadline of session id for a
// margin: the instant on the monotonic clock before which the server
// cannot have expired that session, minus margin. ok is false if nothing
// vouched for that session (none yet, or a later session earned the
// lease: a new session's handshake never renews an old one's).
func (s *Session) leaseDeadline(id int64, margin time.Duration) (time.Time, bool) {
	d, ok := s.conn.LeaseDeadline(id)
	return d.Add(-margin), ok
}

// isClosed reports whether Close was called.
func (s *Session) isClosed() bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// stateMetrics tells the recipe's metrics the layer's session states.
type stateMetrics struct{ m *metrics }

func (sm stateMetrics) SessionState(state string) { sm.m.setSessionState(state) }
func (sm stateMetrics) SessionExpired()           { sm.m.sessionExpired() }

// errSessionGone reports whether err means the session is closed for good.
func errSessionGone(err error) bool {
	return errors.Is(err, zk.ErrClosing) || errors.Is(err, ErrSessionClosed) || errors.Is(err, zkconn.ErrClosed)
}

// layerError gives an error of the connection layer the identity of the
// recipe's sentinel for the same condition, keeping its text and chain.
type layerError struct {
	err  error
	kind error
}

func (e *layerError) Error() string   { return e.err.Error() }
func (e *layerError) Unwrap() []error { return []error{e.err, e.kind} }

// fromLayer maps the layer's errors to the recipe's: a closed session is
// ErrSessionClosed; others (a bad path's *PathError among them) pass
// through.
func fromLayer(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zkconn.ErrClosed):
		return &layerError{err: err, kind: ErrSessionClosed}
	}
	return err
}
