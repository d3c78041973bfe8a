package zkconn

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/jute"
)

// This file watches the ZooKeeper wire under go-zookeeper through its
// Dialer hook, for what the library does not expose or bound:
//
//   - the negotiated session timeout and session id, read from the connect
//     response frame;
//   - the send time of the last request the server answered, for the
//     answer lag, and of the requests that prove the quorum leader heard of
//     the session, for the local lease (leaseclock.go); requests and pings
//     are matched to their replies by xid, and a request is stamped before
//     its bytes are written, so the stamp is never later than the server's
//     receipt of it;
//   - a bound on the handshake: until the connect response arrives every
//     read or write deadline is clamped to handshakeBound, so a server that
//     accepts connections but never answers does not hold the client for
//     go-zookeeper's 10 × 2/3 × timeout before it tries the next one; the
//     bound grows after each handshake that timed out, so a live server
//     slower than it is still reached;
//   - the requests in flight on each connection, for the request deadline
//     (deadline.go), and the length of every frame, refused when no
//     ZooKeeper server would send it (foreign.go).
//
// It also writes the session's own requests between go-zookeeper's frames
// (reads, see datawatch.go, watch.go and ops.go; create2, see
// create2.go; their replies it reads back, see wirecall.go; watch
// removals, in order, see wirequeue.go), and recovers a session the
// ensemble has forgotten (wiped and redeployed).
//
// Refused handshakes. A server closes the connection without answering
// the connect request when it cannot serve (it has no quorum), when the
// client has seen a later zxid than the server's ("client must try
// another server": a lagging follower, or an ensemble wiped and
// redeployed, whose zxids start over), and a proxy in front of a dead
// server closes it the same way. Only the wiped ensemble has forgotten the
// session, and go-zookeeper would present it and its zxid forever; but
// asking for a new session on any long streak of refusals would, after a
// mere outage, leave the old session alive on the servers that come back
// (a restarted server restores its sessions) beside the new one, owning
// the process's ephemeral znodes. So after every handshake has been
// refused for twice the session timeout, connect requests present the
// session without its zxid: a server that knows it resumes it, servers
// that cannot serve refuse again, and once every configured server has
// answered that it expired (a wiped ensemble, ensemble.go), go-zookeeper
// asks for a new session, which starts from zxid 0. A
// session resumed that way may read from a server behind what it saw
// before; after twice the session timeout without a server, that is the
// lesser harm.
//
// It relies on go-zookeeper v1.0.4 writing each frame with one Write call
// from one goroutine; a Write that is not exactly one frame is passed through
// unstamped (the lease then only gets shorter, never longer).

// wireTracker is shared by all connections of one Conn.
type wireTracker struct {
	servers   int
	requested time.Duration

	lastAnswered atomic.Int64 // send time of the latest answer: monotonic ns since epoch, +1; 0 = none
	lease        leaseState   // the session the quorum leader heard of, and after when (leaseclock.go)
	epoch        time.Time
	negotiated   atomic.Int64 // ns
	sessionID    atomic.Int64
	authExpected atomic.Int32 // credentials go-zookeeper replays on each connection
	callSeq      atomic.Uint32
	lastZxid     atomic.Int64 // the highest zxid a reply carried, presented on reconnect
	log          zerolog.Logger
	foreign      *foreignStreak  // handshakes answered by another protocol (foreign.go)
	sasl         *SASLCredential // Config.SASL; nil for none (sasl.go)
	auth         *authFailure    // the first refusal of the SASL credentials
	onRefused    func()          // told of that refusal, on go-zookeeper's goroutine (Conn.authRefused)
	onAnswer     func(answer)    // told of each answer to a connect request (serverList.answered); nil: none
	marks        ensembleMarks   // persistent znodes seen on the ensemble (marks.go)
	digest       []Credential    // Config.Auth, replayed by the identity check (identity.go)
	// probeDial dials one address ("ip:port") an entry reached, as the
	// resolver does (TLS included): the identity probe (identity.go).
	probeDial func(network, entry, addr string, timeout time.Duration) (net.Conn, error)

	order sync.Mutex // the session's own writes, in order (wirequeue.go)

	mu            sync.Mutex
	current       *wireConn     // the connection go-zookeeper uses now
	queue         []queuedFrame // written by the next flush (wirequeue.go)
	dialed        chan struct{} // closed when the next connection becomes current
	refusedSince  time.Time     // start of a streak of refused handshakes
	password      []byte        // from the last connect response (under mu)
	passwordOf    int64         // the session password belongs to (under mu)
	refusals      int
	probeNext     bool                 // connect requests present the session without its zxid (until the streak ends)
	verdicts      map[string]verdict   // servers (as reached) that forgot the session in this streak (ensemble.go)
	foreignAt     map[string]time.Time // servers (as reached) found to serve another ensemble, and when (ensemble.go)
	foreignLogged map[string]bool      // those already logged
	generation    int                  // wiped ensembles recovered from (ensemble.go)
	slowBound     time.Duration        // a longer handshake bound learnt from slow handshakes; 0: none
	saslLog       saslServers          // SASL refusals by server, and the exchange's bound (saslservers.go)
}

func newWireTracker(servers int, requested time.Duration, log zerolog.Logger) *wireTracker {
	return &wireTracker{servers: servers, requested: requested, epoch: time.Now(), dialed: make(chan struct{}),
		log: log, foreign: newForeignStreak(), auth: newAuthFailure(), verdicts: map[string]verdict{},
		foreignAt: map[string]time.Time{}, foreignLogged: map[string]bool{}}
}

// dialer wraps d so every connection is tracked.
func (w *wireTracker) dialer(d zk.Dialer) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		if err := w.auth.cause(); err != nil {
			return nil, err // credentials the ensemble refused are not sent again
		}
		b := w.handshakeBound()
		c, err := d(network, addr, min(timeout, b))
		if err != nil {
			w.notForeign()
			return nil, err
		}
		wc := &wireConn{Conn: c, w: w, addr: addr, bound: b, pending: map[int32]sentRequest{}, authXids: map[int32]bool{},
			calls: map[int32]*pendingCall{}, ready: make(chan struct{}), closed: make(chan struct{})}
		wc.rd.Capture = wc.wantsBody
		wc.rd.MaxCapture = maxCaptured
		wc.rd.Limit = maxConnectResponse
		w.mu.Lock()
		w.current = wc
		close(w.dialed)
		w.dialed = make(chan struct{})
		w.mu.Unlock()
		return wc, nil
	}
}

// closeCurrent closes the connection in use, failing a handshake in
// progress at once.
func (w *wireTracker) closeCurrent() {
	w.mu.Lock()
	c := w.current
	w.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// awaitReady waits, at most d, until the current connection is
// established and has replayed the session's credentials (so a request
// written on it is authorised like go-zookeeper's own), and returns it. With
// redial, while there is no connection it waits for go-zookeeper to dial
// the next one; without, it returns nil at once then. It returns nil too
// when d passes, ctx ends or done is closed.
func (w *wireTracker) awaitReady(ctx context.Context, done <-chan struct{}, d time.Duration, redial bool) *wireConn {
	// Nearly every request finds the connection ready: no timer and no
	// select then (arming one and entering a select of five channels for
	// each request took a tenth of the CPU of five members starting and
	// handing off 100,000 shards; bench --scenarios shards --cpuprofile).
	if c := w.readyConn(); c != nil {
		return c
	}
	t := time.NewTimer(d)
	defer t.Stop()
	waitFor := func(a, b <-chan struct{}) bool { // false: gave up
		select {
		case <-a:
		case <-b:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		case <-done:
			return false
		}
		return true
	}
	for {
		w.mu.Lock()
		c, next := w.current, w.dialed
		w.mu.Unlock()
		switch {
		case c == nil && !redial:
			return nil
		case c == nil:
			if !waitFor(next, nil) {
				return nil
			}
		default:
			if !waitFor(c.ready, c.closed) {
				return nil
			}
			select {
			case <-c.ready:
				return c
			default: // closed: replaced meanwhile, look again
			}
		}
	}
}

// inject writes frame between go-zookeeper's own frames; false if the
// connection is closed or the write fails.
func (c *wireConn) inject(frame []byte) bool {
	ok, _ := c.send(frame)
	return ok
}

// send is inject that also says whether the frame never left: the
// connection was closed before it was written, or the write failed before
// a byte of it was taken (a socket closed under it, reset by the server),
// so the server cannot have seen the request and it may go out on the
// next connection. A write that failed part-way leaves the request's fate
// unknown.
func (c *wireConn) send(frame []byte) (ok, unsent bool) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return false, true
	default:
	}
	n, err := c.Conn.Write(frame)
	return err == nil, err != nil && n == 0
}

// handshakeBound is how long one server may take to dial and answer the
// connect request: a third of the session timeout shared among the servers,
// at least 200ms (a loaded server can be slow to answer), or longer after
// slow handshakes (see handshakeTimedOut), but never over two thirds of
// the session timeout (go-zookeeper's read timeout once connected).
//
// A fixed bound fails a server that is live but slower than it: every
// handshake is abandoned after the connect request reached the server,
// which renews the session each time, so the session neither reconnects
// nor expires and its znodes stay. A bound that grows after each timeout
// reaches such a server; one that shrinks back after a handshake in time
// keeps a silent server (a paused process) from holding the client long.
func (w *wireTracker) handshakeBound() time.Duration {
	t := w.timeout()
	base := max(t/time.Duration(3*max(w.servers, 1)), 200*time.Millisecond)
	w.mu.Lock()
	slow := w.slowBound
	w.mu.Unlock()
	return max(base, min(slow, t*2/3))
}

// handshakeTimedOut records a handshake given up after bound: the next
// one may take twice as long.
func (w *wireTracker) handshakeTimedOut(bound time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.slowBound = max(w.slowBound, 2*bound)
}

// handshakeTook records a handshake answered after d: the bound keeps half
// as much again in hand, so a slow ensemble is reached at the first try.
func (w *wireTracker) handshakeTook(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.slowBound = d * 3 / 2
}

// timeout returns the negotiated session timeout, or the requested one
// before any session.
func (w *wireTracker) timeout() time.Duration {
	if t := time.Duration(w.negotiated.Load()); t > 0 {
		return t
	}
	return w.requested
}

// answered records that a request sent at t got its reply.
func (w *wireTracker) answered(t time.Time) { w.stamp(&w.lastAnswered, t) }

// stamp raises a to t, as monotonic nanoseconds since w.epoch plus one (0
// stays "none"); a later stamp already there is kept.
func (w *wireTracker) stamp(a *atomic.Int64, t time.Time) {
	ns := int64(t.Sub(w.epoch)) + 1
	for {
		old := a.Load()
		if ns <= old || a.CompareAndSwap(old, ns) {
			return
		}
	}
}

// connectRequest returns the connect request go-zookeeper wrote, as the
// layer sends it, and whether it is a probe: presenting the session
// without its zxid after a long streak of refusals (see the file comment
// and ensemble.go), otherwise the
// highest zxid this session has seen on any path. go-zookeeper v1.0.4 presents only the zxid of the
// last reply to its own requests (it ignores those of the layer's, whose
// xids are negative), which may be older than a view the session already
// read: a server behind that view would then accept the session.
func (w *wireTracker) connectRequest(b []byte) (frame []byte, probe bool) {
	if jute.ConnectSessionID(b) != 0 && w.probing() {
		return jute.WithLastZxid(b, 0), true
	}
	if seen := w.lastZxid.Load(); seen > jute.ConnectLastZxid(b) {
		return jute.WithLastZxid(b, seen), false
	}
	return b, false
}

// sawZxid records the zxid of a reply (replies without one carry -1 or 0).
func (w *wireTracker) sawZxid(z int64) {
	for {
		old := w.lastZxid.Load()
		if z <= old || w.lastZxid.CompareAndSwap(old, z) {
			return
		}
	}
}

// handshake records a connect response: the session granted, and when the
// request that got it was sent.
func (w *wireTracker) handshake(sessionID int64, timeout time.Duration, password []byte, sent time.Time) {
	w.mu.Lock()
	if password != nil {
		w.password, w.passwordOf = password, sessionID
	}
	w.endStreakLocked()
	w.mu.Unlock()
	if w.sessionID.Swap(sessionID) != sessionID {
		w.lastAnswered.Store(0)
		w.answer(answerSession)
	} else {
		w.answer(answerResumed)
	}
	w.negotiated.Store(int64(timeout))
	w.answered(sent)
	w.vouch(sessionID, sent) // the quorum leader granted or revalidated the session (leaseclock.go)
	w.notForeign()
}

// answer tells the host provider that a server answered a connect request
// (a new session, the session resumed, an expiry believed): its next dial
// needs no pause (hosts.go).
func (w *wireTracker) answer(a answer) {
	if w.onAnswer != nil {
		w.onAnswer(a)
	}
}

// credentials returns the session id and password of the last handshake.
func (w *wireTracker) credentials() (int64, []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.passwordOf, slices.Clone(w.password)
}

// refused records a server closing the connection before answering the
// connect request, and decides whether the next connect request presents
// the session without its zxid (see the file comment).
func (w *wireTracker) refused() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.notForeign()
	now := time.Now()
	if w.refusedSince.IsZero() {
		w.refusedSince = now
	}
	w.refusals++
	if !w.probeNext && w.sessionID.Load() != 0 && w.refusals >= w.servers && now.Sub(w.refusedSince) >= 2*w.timeout() {
		w.probeNext = true
		w.log.Info().Int64("session_id", w.sessionID.Load()).
			Msg("every server refused the session for two session timeouts: presenting it without its zxid, for the ensemble to judge it")
	}
}

// probing reports whether connect requests present the session without its
// zxid: from a long streak of refusals until a server resumes the session
// or every server has answered that it expired (ensemble.go).
func (w *wireTracker) probing() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.probeNext
}

// wireConn is one tracked TCP connection to a server.
type wireConn struct {
	net.Conn
	w     *wireTracker
	addr  string // as dialled
	bound time.Duration

	established atomic.Bool
	saslDue     bool          // established, SASL exchange not yet done (c.mu)
	ready       chan struct{} // closed once established, SASL done and credentials replayed
	readyOnce   sync.Once
	closed      chan struct{}
	closeOnce   sync.Once
	wmu         sync.Mutex // one frame at a time: go-zookeeper's and injected ones
	wroteFirst  bool
	connectSent time.Time
	presented   int64                // the session id the connect request presented (0: a new session)
	probe       bool                 // it presented the session without its zxid (ensemble.go)
	expiryDue   bool                 // the connect response says the presented session expired: to judge (ensemble.go; c.mu)
	identityDue bool                 // the connect response granted a new session: its server to check (identity.go; c.mu)
	granted     jute.ConnectResponse // that response, recorded once the check passes

	mu       sync.Mutex
	pending  map[int32]sentRequest // requests in flight, by xid (pings apart)
	answered time.Time             // when the latest answer to a request (not a ping) arrived
	pings    []time.Time
	authXids map[int32]bool // setAuth requests awaiting their reply
	authSent int
	calls    map[int32]*pendingCall // requests of the session awaiting their reply (wirecall.go)
	rd       jute.Splitter
	required error // a reply of SESSIONCLOSEDREQUIRESASLAUTH: the session is over (saslrequired.go)

	session       int64          // the session established on the connection (c.mu)
	syncs         []answeredSync // the latest syncs answered (leaseclock.go)
	syncsInFlight int
}

func (c *wireConn) clamp(t time.Time) time.Time {
	if c.established.Load() {
		return t
	}
	limit := time.Now().Add(c.bound)
	if t.IsZero() || t.After(limit) {
		return limit
	}
	return t
}

// SetDeadline clamps the deadline during the handshake.
func (c *wireConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.clamp(t)) }

// SetReadDeadline clamps the deadline during the handshake.
func (c *wireConn) SetReadDeadline(t time.Time) error { return c.Conn.SetReadDeadline(c.clamp(t)) }

// SetWriteDeadline clamps the deadline during the handshake.
func (c *wireConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.clamp(t)) }

// Write stamps the frame in b (when it is exactly one) and sends it.
func (c *wireConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	now := time.Now()
	whole := len(b) >= 8 && int(binary.BigEndian.Uint32(b)) == len(b)-4
	if !c.wroteFirst {
		c.wroteFirst = true
		c.connectSent = now
		if jute.IsConnectRequest(b) {
			c.presented = jute.ConnectSessionID(b)
			b, c.probe = c.w.connectRequest(b)
		}
		return c.Conn.Write(b)
	}
	if whole {
		xid := int32(binary.BigEndian.Uint32(b[4:]))
		op := int32(binary.BigEndian.Uint32(b[8:]))
		c.mu.Lock()
		switch {
		case xid == jute.XidPing:
			c.pings = append(c.pings, now)
		case op == jute.OpSetAuth:
			c.authXids[xid] = true
			c.authSent++
			fallthrough
		default:
			c.pending[xid] = sentRequest{at: now, op: op}
		}
		c.mu.Unlock()
	}
	return c.Conn.Write(b)
}

// Close closes the connection and forgets it as current.
func (c *wireConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	c.w.mu.Lock()
	if c.w.current == c {
		c.w.current = nil
	}
	c.w.mu.Unlock()
	return c.Conn.Close()
}

// Read passes bytes through and parses the frames they carry. A frame
// longer than a ZooKeeper server sends fails the read (see jute.LimitError)
// before go-zookeeper sees its length and allocates a buffer for it.
func (c *wireConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		ferr := c.rd.Feed(b[:n], c.frame)
		due, expiry, identity, required := c.saslDue, c.expiryDue, c.identityDue, c.required
		c.expiryDue = false
		c.mu.Unlock()
		if ferr != nil {
			return 0, c.oversized(ferr)
		}
		if required != nil {
			return 0, c.endRequired(required)
		}
		if expiry {
			if err := c.w.expiryAnswered(c); err != nil { // go-zookeeper never reads the answer
				_ = c.Close()
				return 0, err
			}
		}
		if due { // the connect response was just read whole
			if err := c.loginSASL(); err != nil {
				return 0, err
			}
		}
		if identity {
			if err := c.confirmIdentity(); err != nil {
				return 0, err
			}
		}
	}
	if err != nil && !c.established.Load() {
		if isTimeout(err) {
			c.w.notForeign()
			c.w.handshakeTimedOut(c.bound)
		} else {
			c.w.refused()
		}
	}
	return n, err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// frame handles the head of one complete frame read from the server, or
// its whole body when a pending call captured it (called with c.mu held).
func (c *wireConn) frame(head []byte) {
	if !c.established.Load() {
		r, ok := jute.DecodeConnectResponse(head)
		if ok && r.SessionID == 0 && c.presented != 0 {
			c.expiryDue = true // judged by Read, which may ask the server (ensemble.go)
		}
		if ok && r.SessionID != 0 {
			c.w.handshakeTook(time.Since(c.connectSent))
			if r.SessionID != c.presented && c.w.marks.held() {
				c.granted, c.identityDue = r, true // recorded once its server proves its ensemble (identity.go)
			} else {
				c.w.handshake(r.SessionID, r.Timeout, r.Password, c.connectSent)
			}
			c.session = r.SessionID
			c.rd.Limit = maxReplyFrame
			c.established.Store(true)
			c.saslDue = c.w.sasl != nil
			c.checkReady()
		}
		return
	}
	h, ok := jute.DecodeReplyHeader(head)
	if !ok {
		return
	}
	c.w.sawZxid(h.Zxid)
	if h.Err == jute.CodeSessionClosedRequireSASL && c.required == nil {
		c.loginRequired(h.Xid)
	}
	switch xid := h.Xid; xid {
	case jute.XidWatchEvent:
	case jute.XidPing:
		if len(c.pings) > 0 {
			c.w.answered(c.pings[0])
			c.pings = c.pings[1:]
		}
	default:
		if r, ok := c.pending[xid]; ok {
			delete(c.pending, xid)
			c.w.answered(r.at)
			c.answered = time.Now()
			if r.op == jute.OpSync {
				c.syncAnswered(r, int32(h.Err), time.Now())
			}
		}
		if c.authXids[xid] {
			delete(c.authXids, xid)
			c.checkReady()
		}
		c.deliver(xid, head)
	}
}

// checkReady marks the connection ready once every credential of the
// session has been replayed and answered (c.mu held).
func (c *wireConn) checkReady() {
	if !c.saslDue && !c.identityDue && c.authSent >= int(c.w.authExpected.Load()) && len(c.authXids) == 0 {
		c.readyOnce.Do(func() { close(c.ready) })
	}
}
