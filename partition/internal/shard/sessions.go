package shard

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	root "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// This file holds the ZooKeeper sessions of one member, so that none owns
// more than a bounded number of ephemeral znodes (see sessionCap).

// Sessions are the sessions one member's elections run on: the one given
// to NewManager (the primary, which also owns the member znode and writes
// the record) and the siblings opened when the elections outgrow it. A
// shard's runner takes its place when it starts: on the lowest-numbered
// session with room (perSession elections, one fewer on the primary for the
// member znode), opening the next sibling when every session is full. It
// keeps that place until it finishes, so each session's runners behave as
// on one shared session, a session's expiry ends only its own runners'
// leaderships, and its replacement (go-zookeeper's new session after
// expiry) carries the same runners. Each session paces its own election
// starts (MaxInFlight, adapted to its own answers): a line of requests
// waits on one connection, and one session's lag says nothing of another's.
// Siblings stay open until close.
type Sessions struct {
	primary    *recipe.Session
	perSession int
	inFlight   int // MaxInFlight
	log        zerolog.Logger
	count      prometheus.Gauge // sessions open

	turn chan struct{} // capacity 1: held by the runner placing itself (it may open a sibling)

	mu     sync.Mutex
	open   []*Seat // open[0] is the primary
	closed bool
	// failedAt and failed: the last sibling that could not be opened, and
	// why; for a session timeout after it, places that need a sibling fail
	// at once with the same error instead of each waiting out a connect.
	failedAt time.Time
	failed   error
}

// siblingOpenTimeouts bounds the opening of a sibling session, in session
// timeouts of the primary: a handshake takes milliseconds, and a sibling
// that cannot be opened leaves its elections without a session (see
// Unseated) until it is given up.
const siblingOpenTimeouts = 2

// Seat is one session, its election starts in flight, and the elections
// placed on it (their number and shards, under Sessions.mu).
type Seat struct {
	Sess      *recipe.Session // the session; its id changes when it is replaced
	starts    *limiter
	elections int
	shards    map[string]bool
	// Down: the member found the session down (partition's
	// loopnotice.go); no election is placed on it until it is up again.
	Down atomic.Bool
}

func (p *Sessions) newSeat(sess *recipe.Session) *Seat {
	return &Seat{Sess: sess, starts: newLimiter(p.inFlight, sess.AnswerLag, sess.Timeout), shards: map[string]bool{}}
}

// NewSessions returns the sessions of a member whose first is primary:
// at most perSession elections each (one fewer on the primary, for the
// member znode), inFlight election starts at once on each (Config's
// MaxShardsPerSession and MaxInFlight); count gauges the open sessions.
func NewSessions(primary *recipe.Session, perSession, inFlight int, count prometheus.Gauge, log zerolog.Logger) *Sessions {
	count.Set(1)
	p := &Sessions{
		primary: primary, perSession: perSession, inFlight: inFlight, count: count, log: log,
		turn: make(chan struct{}, 1),
	}
	p.open = []*Seat{p.newSeat(primary)}
	return p
}

// room is how many elections the i-th session carries at most.
func (p *Sessions) room(i int) int {
	if i == 0 {
		return p.perSession - 1 // and the member znode
	}
	return p.perSession
}

// place takes a place for the election of shard and returns its seat,
// opening a sibling session when every open one is full or down. It blocks while another
// runner opens one, until ctx ends (ctx's error), or while it opens one
// itself, until it is open or its Connect fails (its error, wrapped). Give
// the seat back with leave.
func (p *Sessions) place(ctx context.Context, shard string) (*Seat, error) {
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-p.turn }()
	p.mu.Lock()
	for i, s := range p.open {
		if s.elections < p.room(i) && !s.Down.Load() {
			s.elections++
			s.shards[shard] = true
			p.mu.Unlock()
			return s, nil
		}
	}
	n, closed, failed := len(p.open), p.closed, p.failed
	if failed != nil && time.Since(p.failedAt) >= p.primary.Timeout() {
		failed = nil
	}
	p.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("partition: %w", recipe.ErrSessionClosed)
	}
	if failed != nil {
		return nil, failed
	}
	// A sibling being opened is not given up when this runner stops: an
	// abandoned handshake leaves go-zookeeper closing it in the background;
	// Connect is bounded by its connect timeout and by siblingOpenTimeouts
	// session timeouts, and the session serves the next runners.
	open, cancel := context.WithTimeout(context.WithoutCancel(ctx), siblingOpenTimeouts*p.primary.Timeout())
	sib, err := p.primary.Sibling(open)
	cancel()
	if err != nil {
		err = fmt.Errorf("partition: open session %d of the member (%d elections each): %w", n+1, p.perSession, err)
		p.mu.Lock()
		p.failedAt, p.failed = time.Now(), err
		p.mu.Unlock()
		return nil, err
	}
	s := p.newSeat(sib)
	s.elections = 1
	s.shards[shard] = true
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = sib.Close()
		return nil, fmt.Errorf("partition: %w", recipe.ErrSessionClosed)
	}
	p.open = append(p.open, s)
	p.mu.Unlock()
	p.count.Set(float64(n + 1))
	p.log.Info().Int("sessions", n+1).Int64("session_id", sib.ID()).Int("per_session", p.perSession).
		Msg("elections spread over another session")
	return s, nil
}

// leave gives back the place of shard taken by place.
func (p *Sessions) leave(s *Seat, shard string) {
	p.mu.Lock()
	s.elections--
	delete(s.shards, shard)
	p.mu.Unlock()
}

// Siblings returns the open sibling sessions' seats, oldest first (the
// primary's is not among them).
func (p *Sessions) Siblings() []*Seat {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.open[1:])
}

// ShardsOn returns the shards whose elections sit on seat s.
func (p *Sessions) ShardsOn(s *Seat) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Collect(maps.Keys(s.shards))
}

// Loads returns what each open session carries, the primary first.
func (p *Sessions) Loads(pathBytes int) []SessionLoad {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]SessionLoad, 0, len(p.open))
	for i, s := range p.open {
		n := s.elections
		if i == 0 {
			n++ // the member znode
		}
		out = append(out, SessionLoad{SessionID: s.Sess.ID(), Ephemerals: n, CloseSessionBytes: root.CloseSessionBytes(n, pathBytes)})
	}
	return out
}

// Close closes the siblings (their remaining ephemerals go with them),
// once every runner has left; the primary is the caller's. Idempotent.
func (p *Sessions) Close() {
	p.mu.Lock()
	p.closed = true
	sibs := p.open[1:]
	p.open = p.open[:1]
	p.mu.Unlock()
	for _, s := range sibs {
		_ = s.Sess.Close() // always nil
	}
	p.count.Set(1)
}

// SessionLoad is what one of a member's ZooKeeper sessions carries.
type SessionLoad struct {
	// SessionID is the session's current id (0 while it has none).
	SessionID int64
	// Ephemerals counts the shard elections placed on it, each owning at
	// most one ephemeral znode, plus the member znode on the primary.
	Ephemerals int
	// CloseSessionBytes bounds the size of its closeSession transaction
	// with those ephemerals at the longest election path (see
	// CloseSessionBytes), to compare with jute.maxbuffer.
	CloseSessionBytes int
}

// Session returns the i-th open session (0 is the primary), or nil while
// there are fewer (for tests).
func (p *Sessions) Session(i int) *recipe.Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i >= len(p.open) {
		return nil
	}
	return p.open[i].Sess
}
