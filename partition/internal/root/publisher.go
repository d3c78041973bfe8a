package root

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/recipe"
)

// This file writes a member's record (its persistent znode under
// <root>/owners, Record): one write at a time, the latest record only, on
// the session current when the write goes out.

// Record writes follow each other closely: a record is what routers,
// dashboards and operators' --wait read to learn who leads, so a change
// is written one write round trip plus PublishInterval after the last
// write at most (the batching delay: a burst of leaderships goes out in
// one or two writes). A large record (above smallRecord bytes: thousands
// of leaderships, re-read by every other member after each write) is
// spaced out more: publishCostFactor times the slowest recent write, at
// most maxPublishGap, so that the member spends at most about a tenth of
// its time writing it, and the ensemble about a tenth of what it would.
const (
	// PublishInterval is the batching delay between a small record's
	// writes.
	PublishInterval   = 50 * time.Millisecond
	publishCostFactor = 10
	maxPublishGap     = time.Second
	smallRecord       = 64 << 10
)

// errNotRegistered refuses a record write over another writer's: the
// member does not hold its member id now (another live session does, or
// it is not registered again yet after its session expired).
var errNotRegistered = errors.New("partition: record changed by another writer and the member id is not registered by this member")

// errSessionReplaced ends a record write bound to a session that another
// session replaced meanwhile: the record is written again at once on the
// new one, never after a wait on the old one's connection.
var errSessionReplaced = errors.New("partition: session replaced during the record write")

// Publisher writes a member's record, the latest version only, one
// write at a time. A write is conditional on the record's version this
// member last wrote or read, so that a stale member (one whose id another
// live session now holds) cannot overwrite a newer record: when another
// writer changed it, the record is overwritten only while the member
// holds its id (PublisherConfig.Registered reports that). A write that
// fails is retried until it succeeds (a record never stays wrong after a
// fault), at once when the session was replaced meanwhile. Its methods
// are for one goroutine (the member's loop), beside the writer Start runs.
type Publisher struct {
	cfg PublisherConfig

	// version is the record's version we last wrote or read, when known.
	// One goroutine at a time uses them: Adopt before Start, then the
	// writer, then the final record's Write after Wait.
	version int32
	known   bool

	mu      sync.Mutex
	pending *Record
	since   time.Time // the earliest leadership change pending shows; zero: none
	kick    chan struct{}
	idle    chan struct{} // a value after each flush: the loop may queue the next record (Idle)
	wg      sync.WaitGroup
	slow    atomic.Int64 // recent slowest write, in ns, decaying
	size    atomic.Int64 // bytes of the last record written
	busy    atomic.Bool  // a record is queued or being written
	failing atomic.Bool  // the last write failed: the writer retries
	nextAt  atomic.Int64 // when the next write may start, Unix ns
}

// PublisherConfig is what a Publisher writes with. Every field is
// required.
type PublisherConfig struct {
	// Session is the member's session: every write goes out on the one
	// current then.
	Session *recipe.Session
	Path    string   // the record's znode, <root>/owners/<member>
	ACL     []zk.ACL // of the record when created
	// Registered reports whether the member holds its member id now (its
	// member znode is its own): only then is a record another writer
	// changed overwritten.
	Registered func(context.Context) (bool, error)
	// Lag observes, after each write, the time from the earliest
	// leadership change the record shows to the write.
	Lag func(time.Duration)
	// Failed counts a write that failed (it is retried, but for a record
	// over ZooKeeper's limit).
	Failed func()
	// Log gets the failed writes: a warning for one no retry fixes or for
	// connection loss past recordWarnAfter, debug lines before.
	Log zerolog.Logger
}

// NewPublisher returns the publisher of the record cfg names; Start runs
// its writer.
func NewPublisher(cfg PublisherConfig) *Publisher {
	return &Publisher{cfg: cfg, kick: make(chan struct{}, 1), idle: make(chan struct{}, 1)}
}

// Adopt reads the record an earlier session of this member left, noting
// its version (the next write replaces it); nil when there is none or it
// cannot be read or decoded (the member then starts without it). Call it
// before Start.
func (p *Publisher) Adopt(ctx context.Context) *Record {
	data, st, err := p.cfg.Session.Get(ctx, p.cfg.Path)
	if err != nil {
		return nil
	}
	p.noteRead(st.Version)
	rec, err := DecodeRecord(data)
	if err != nil {
		return nil
	}
	return &rec
}

// Idle receives a value after each write (or burst of writes) ends: the
// loop may queue the next record (ReadyIn).
func (p *Publisher) Idle() <-chan struct{} { return p.idle }

// gap returns how long after a record write the next one may start.
func (p *Publisher) gap() time.Duration {
	if p.size.Load() <= smallRecord {
		return PublishInterval
	}
	return min(max(PublishInterval, publishCostFactor*p.SlowWrite()), maxPublishGap)
}

// SlowWrite returns about the slowest recent record write.
func (p *Publisher) SlowWrite() time.Duration { return time.Duration(p.slow.Load()) }

// observeWrite keeps the slowest recent write: a slower one replaces it at
// once, faster ones wear it down by an eighth each.
func (p *Publisher) observeWrite(d time.Duration) {
	old := p.slow.Load()
	if int64(d) > old {
		p.slow.Store(int64(d))
		return
	}
	p.slow.Store(old - (old-int64(d))/8)
}

// noteRead notes the version of the record as just read.
func (p *Publisher) noteRead(version int32) { p.version, p.known = version, true }

// ReadyIn returns how long from now the next record may be queued: 0 when
// it may be now; negative while one is being written (the loop hears of
// its end on Idle). A writer retrying a failed write takes a newer record
// at once: the one it retries is outdated.
func (p *Publisher) ReadyIn(now time.Time) time.Duration {
	switch {
	case p.failing.Load():
		return 0
	case p.busy.Load():
		return -1
	}
	return max(time.Unix(0, p.nextAt.Load()).Sub(now), 0)
}

// Set queues r to be written, replacing any version not written yet;
// since is the earliest leadership change r shows (zero: none), for the
// publish lag.
func (p *Publisher) Set(r Record, since time.Time) {
	p.mu.Lock()
	p.pending = &r
	if p.since.IsZero() || !since.IsZero() && since.Before(p.since) {
		p.since = since
	}
	p.busy.Store(true)
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// take returns the pending record and the earliest change it shows, and
// forgets them; nil when none is pending.
func (p *Publisher) take() (*Record, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, since := p.pending, p.since
	p.pending, p.since = nil, time.Time{}
	return r, since
}

// putBack queues r again after a failed write, unless a newer record was
// queued meanwhile (it shows since too).
func (p *Publisher) putBack(r *Record, since time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = r
	}
	if p.since.IsZero() || !since.IsZero() && since.Before(p.since) {
		p.since = since
	}
}

// Start runs the writer until ctx is done; Wait returns after it stopped.
func (p *Publisher) Start(ctx context.Context) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			select {
			case <-p.kick:
			case <-ctx.Done():
				return
			}
			p.flush(ctx)
			p.nextAt.Store(time.Now().Add(p.gap()).UnixNano())
			p.busy.Store(false)
			select {
			case p.idle <- struct{}{}:
			default:
			}
		}
	}()
}

// Wait returns once the writer Start ran has stopped.
func (p *Publisher) Wait() { p.wg.Wait() }

// flush writes the pending record, retrying until it is written or ctx is
// done; a newer record queued meanwhile replaces the one retried.
func (p *Publisher) flush(ctx context.Context) {
	retry := NewBackoff()
	defer p.failing.Store(false)
	var failingSince time.Time // the first failure of this streak of retryable ones
	for ctx.Err() == nil {
		r, since := p.take()
		if r == nil {
			return
		}
		sess := p.cfg.Session
		start, id, connected, next := time.Now(), sess.ID(), sess.Connected(), sess.NextConnect()
		err := p.writeOn(ctx, id, *r)
		if err == nil {
			p.failing.Store(false)
			failingSince = time.Time{}
			if connected && sess.ID() == id { // not a wait for a connection
				p.observeWrite(time.Since(start))
			}
			if !since.IsZero() {
				p.cfg.Lag(time.Since(since))
			}
			continue // a record queued while this one was written (a failing writer's)
		}
		p.cfg.Failed()
		if errors.Is(err, ErrRecordTooLarge) {
			p.cfg.Log.Error().Err(err).Msg("member record not published")
			return
		}
		p.putBack(r, since)
		p.failing.Store(true)
		if ctx.Err() != nil {
			return // stopped: the final record follows
		}
		if errors.Is(err, errSessionReplaced) || sess.ID() != id && sess.ID() != 0 {
			p.cfg.Log.Debug().Err(err).Msg("publish member record: on the new session now")
			continue // the new session is there: no backoff
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		}
		p.logFailure(err, time.Since(failingSince))
		retry.WaitOr(ctx, next) // a new session ends the pause
	}
}

// writeOn is write bound to session (0: the next one): it ends with
// errSessionReplaced as soon as another session replaces it, instead of
// waiting on the old session's connection.
func (p *Publisher) writeOn(ctx context.Context, session int64, r Record) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if session != 0 {
		go p.cancelOnReplace(ctx, cancel, session)
	}
	err := p.Write(ctx, r)
	if err != nil && errors.Is(context.Cause(ctx), errSessionReplaced) {
		return fmt.Errorf("write %s: %w", p.cfg.Path, errSessionReplaced)
	}
	return err
}

// cancelOnReplace cancels ctx with errSessionReplaced when a session other
// than session connects, or returns when ctx ends.
func (p *Publisher) cancelOnReplace(ctx context.Context, cancel context.CancelCauseFunc, session int64) {
	for {
		next := p.cfg.Session.NextConnect()
		if id := p.cfg.Session.ID(); id != 0 && id != session {
			cancel(errSessionReplaced)
			return
		}
		select {
		case <-next:
		case <-ctx.Done():
			return
		}
	}
}

// Write stores r now, over the version we last wrote or read, creating
// the znode if needed: the final record's write, after Wait (the writer
// Start runs writes the others). If another writer changed the record
// meanwhile, it is overwritten only while the member holds its id;
// otherwise the error wraps errNotRegistered. Errors are wrapped with the
// record's path; ErrRecordTooLarge for a record over ZooKeeper's limit.
func (p *Publisher) Write(ctx context.Context, r Record) error {
	data, err := r.Encode()
	if err != nil {
		return err
	}
	err = p.store(ctx, data)
	if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists) {
		err = p.overwrite(ctx, data)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", p.cfg.Path, err)
	}
	p.size.Store(int64(len(data)))
	return nil
}

// store sets data over the known version, or creates the znode when no
// version is known or the znode is gone, and notes the new version.
func (p *Publisher) store(ctx context.Context, data []byte) error {
	if p.known {
		st, err := p.cfg.Session.Set(ctx, p.cfg.Path, data, p.version)
		if err == nil {
			p.version = st.Version
			return nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	if _, err := p.cfg.Session.Create(ctx, p.cfg.Path, data, 0, p.cfg.ACL); err != nil {
		return err
	}
	p.noteRead(0)
	return nil
}

// overwrite stores data over a record another writer changed, if the
// member holds its id.
func (p *Publisher) overwrite(ctx context.Context, data []byte) error {
	ok, err := p.cfg.Registered(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errNotRegistered
	}
	exists, st, err := p.cfg.Session.Exists(ctx, p.cfg.Path)
	if err != nil {
		return err
	}
	p.known = exists
	if exists {
		p.version = st.Version
	}
	return p.store(ctx, data)
}

// recordWarnAfter is how long a record may keep failing for connection
// loss before it is a warning: a write cut by a lost connection is retried
// at once on the next, and the session's own events say the connection
// was lost.
const recordWarnAfter = 5 * time.Second

// logFailure logs a failed record write: a warning for an error no retry
// fixes, or for connection loss that has lasted recordWarnAfter; else a
// debug line (the write is retried).
func (p *Publisher) logFailure(err error, failing time.Duration) {
	if recipe.Retryable(err) && failing < recordWarnAfter {
		p.cfg.Log.Debug().Err(err).Dur("failing", failing).Msg("publish member record; again")
		return
	}
	p.cfg.Log.Warn().Err(err).Dur("failing", failing).Msg("publish member record")
}
