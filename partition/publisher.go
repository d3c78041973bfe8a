package partition

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// This file writes the member's record (its persistent znode under
// <root>/owners): one write at a time, the latest record only, on the
// session current when the write goes out.

// Record writes follow each other closely: a record is what routers,
// dashboards and operators' --wait read to learn who leads, so a change
// is written one write round trip plus publishInterval after the last
// write at most (the batching delay: a burst of leaderships goes out in
// one or two writes). A large record (above smallRecord bytes: thousands
// of leaderships, re-read by every other member after each write) is
// spaced out more: publishCostFactor times the slowest recent write, at
// most maxPublishGap, so that the member spends at most about a tenth of
// its time writing it, and the ensemble about a tenth of what it would.
const (
	publishInterval   = 50 * time.Millisecond
	publishCostFactor = 10
	maxPublishGap     = time.Second
	smallRecord       = 64 << 10
)

// errNotRegistered refuses a record write over another writer's: this
// Manager does not hold its member id now (another live session does, or
// it is not registered again yet after its session expired).
var errNotRegistered = errors.New("partition: record changed by another writer and the member id is not registered by this Manager")

// errSessionReplaced ends a record write bound to a session that another
// session replaced meanwhile: the record is written again at once on the
// new one, never after a wait on the old one's connection.
var errSessionReplaced = errors.New("partition: session replaced during the record write")

// publisher writes the member's record, the latest version only, one
// write at a time. A write is conditional on the record's version this
// member last wrote or read, so that a stale member (one whose id another
// live session now holds) cannot overwrite a newer record: when another
// writer changed it, the record is overwritten only while this Manager
// holds the member id (registered reports that). A write that fails is
// retried until it succeeds (a record never stays wrong after a fault),
// at once when the session was replaced meanwhile.
type publisher struct {
	sess       *recipe.Session
	path       string
	acl        []zk.ACL // of the record when created
	log        zerolog.Logger
	registered func(context.Context) (bool, error)
	met        *metrics

	// version is the record's version we last wrote or read, when known.
	// One goroutine at a time uses them: adoptOwnRecord before start, then
	// the writer, then the final record's write after wait.
	version int32
	known   bool

	mu      sync.Mutex
	pending *record
	since   time.Time // the earliest leadership change pending shows; zero: none
	kick    chan struct{}
	idle    chan struct{} // a value after each flush: the loop may queue the next record
	wg      sync.WaitGroup
	slow    atomic.Int64 // recent slowest write, in ns, decaying
	size    atomic.Int64 // bytes of the last record written
	busy    atomic.Bool  // a record is queued or being written
	failing atomic.Bool  // the last write failed: the writer retries
	nextAt  atomic.Int64 // when the next write may start, Unix ns
}

// newPublisher returns the publisher of the record at p, created with acl;
// registered reports whether this Manager holds the member id now.
func newPublisher(sess *recipe.Session, p string, acl []zk.ACL, registered func(context.Context) (bool, error), met *metrics, log zerolog.Logger) *publisher {
	return &publisher{sess: sess, path: p, acl: acl, registered: registered, met: met, log: log,
		kick: make(chan struct{}, 1), idle: make(chan struct{}, 1)}
}

// gap returns how long after a record write the next one may start.
func (p *publisher) gap() time.Duration {
	if p.size.Load() <= smallRecord {
		return publishInterval
	}
	return min(max(publishInterval, publishCostFactor*p.slowWrite()), maxPublishGap)
}

// slowWrite returns about the slowest recent record write.
func (p *publisher) slowWrite() time.Duration { return time.Duration(p.slow.Load()) }

// observeWrite keeps the slowest recent write: a slower one replaces it at
// once, faster ones wear it down by an eighth each.
func (p *publisher) observeWrite(d time.Duration) {
	old := p.slow.Load()
	if int64(d) > old {
		p.slow.Store(int64(d))
		return
	}
	p.slow.Store(old - (old-int64(d))/8)
}

// read notes the version of the record as just read.
func (p *publisher) read(version int32) { p.version, p.known = version, true }

// readyIn returns how long from now the next record may be queued: 0 when
// it may be now; negative while one is being written (the loop hears of
// its end on idle). A writer retrying a failed write takes a newer record
// at once: the one it retries is outdated.
func (p *publisher) readyIn(now time.Time) time.Duration {
	switch {
	case p.failing.Load():
		return 0
	case p.busy.Load():
		return -1
	}
	return max(time.Unix(0, p.nextAt.Load()).Sub(now), 0)
}

// set queues r to be written, replacing any version not written yet;
// since is the earliest leadership change r shows (zero: none), for the
// publish lag.
func (p *publisher) set(r record, since time.Time) {
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
func (p *publisher) take() (*record, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, since := p.pending, p.since
	p.pending, p.since = nil, time.Time{}
	return r, since
}

// putBack queues r again after a failed write, unless a newer record was
// queued meanwhile (it shows since too).
func (p *publisher) putBack(r *record, since time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = r
	}
	if p.since.IsZero() || !since.IsZero() && since.Before(p.since) {
		p.since = since
	}
}

// start runs the writer until ctx is done; wait returns after it stopped.
func (p *publisher) start(ctx context.Context) {
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

func (p *publisher) wait() { p.wg.Wait() }

// flush writes the pending record, retrying until it is written or ctx is
// done; a newer record queued meanwhile replaces the one retried.
func (p *publisher) flush(ctx context.Context) {
	retry := rootdata.NewBackoff()
	defer p.failing.Store(false)
	var failingSince time.Time // the first failure of this streak of retryable ones
	for ctx.Err() == nil {
		r, since := p.take()
		if r == nil {
			return
		}
		start, sess, connected, next := time.Now(), p.sess.ID(), p.sess.Connected(), p.sess.NextConnect()
		err := p.writeOn(ctx, sess, *r)
		if err == nil {
			p.failing.Store(false)
			failingSince = time.Time{}
			if connected && p.sess.ID() == sess { // not a wait for a connection
				p.observeWrite(time.Since(start))
			}
			if !since.IsZero() {
				p.met.publishLag.Observe(time.Since(since).Seconds())
			}
			continue // a record queued while this one was written (a failing writer's)
		}
		p.met.recordFailures.Inc()
		if errors.Is(err, rootdata.ErrRecordTooLarge) {
			p.log.Error().Err(err).Msg("member record not published")
			return
		}
		p.putBack(r, since)
		p.failing.Store(true)
		if ctx.Err() != nil {
			return // stopped: the final record follows
		}
		if errors.Is(err, errSessionReplaced) || p.sess.ID() != sess && p.sess.ID() != 0 {
			p.log.Debug().Err(err).Msg("publish member record: on the new session now")
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
func (p *publisher) writeOn(ctx context.Context, session int64, r record) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if session != 0 {
		go p.cancelOnReplace(ctx, cancel, session)
	}
	err := p.write(ctx, r)
	if err != nil && errors.Is(context.Cause(ctx), errSessionReplaced) {
		return fmt.Errorf("write %s: %w", p.path, errSessionReplaced)
	}
	return err
}

// cancelOnReplace cancels ctx with errSessionReplaced when a session other
// than session connects, or returns when ctx ends.
func (p *publisher) cancelOnReplace(ctx context.Context, cancel context.CancelCauseFunc, session int64) {
	for {
		next := p.sess.NextConnect()
		if id := p.sess.ID(); id != 0 && id != session {
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

// write stores r over the version we last wrote or read, creating the
// znode if needed. If another writer changed the record meanwhile, it is
// overwritten only while this Manager holds the member id; otherwise
// write returns an error wrapping errNotRegistered.
func (p *publisher) write(ctx context.Context, r record) error {
	data, err := r.Encode()
	if err != nil {
		return err
	}
	err = p.store(ctx, data)
	if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists) {
		err = p.overwrite(ctx, data)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	p.size.Store(int64(len(data)))
	return nil
}

// store sets data over the known version, or creates the znode when no
// version is known or the znode is gone, and notes the new version.
func (p *publisher) store(ctx context.Context, data []byte) error {
	if p.known {
		st, err := p.sess.Set(ctx, p.path, data, p.version)
		if err == nil {
			p.version = st.Version
			return nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	if _, err := p.sess.Create(ctx, p.path, data, 0, p.acl); err != nil {
		return err
	}
	p.read(0)
	return nil
}

// overwrite stores data over a record another writer changed, if this
// Manager holds the member id.
func (p *publisher) overwrite(ctx context.Context, data []byte) error {
	ok, err := p.registered(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errNotRegistered
	}
	exists, st, err := p.sess.Exists(ctx, p.path)
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
func (p *publisher) logFailure(err error, failing time.Duration) {
	if recipe.Retryable(err) && failing < recordWarnAfter {
		p.log.Debug().Err(err).Dur("failing", failing).Msg("publish member record; again")
		return
	}
	p.log.Warn().Err(err).Dur("failing", failing).Msg("publish member record")
}
