package partition

import (
	"bytes"
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

// This file registers the member (its ephemeral znode under
// <root>/members) and publishes its record (its persistent znode under
// <root>/owners).

// Record writes are spaced out: a record changes with every leadership,
// thousands of leaderships start within a second at a cold start, and
// every other member re-reads the record after each write. The gap is
// publishInterval, or publishCostFactor times the slowest recent write
// (encoding included) when writes are slow (a large record, a busy
// ensemble), at most maxPublishGap: a member then spends at most about a
// tenth of its time writing its record, and the ensemble about a tenth of
// what it would on the member's records, however slow it is.
const (
	publishInterval   = 50 * time.Millisecond
	publishCostFactor = 10
	maxPublishGap     = time.Second
)

// gap returns how long after a record write the next one may start.
func (p *publisher) gap() time.Duration {
	return min(max(publishInterval, publishCostFactor*p.slowWrite()), maxPublishGap)
}

// Names of root's children (root's layout).
const (
	membersDir = rootdata.MembersDir
	ownersDir  = rootdata.OwnersDir
	shardsDir  = rootdata.ShardsDir
)

// register creates the member's ephemeral znode with instance (the
// Manager's random id) as its data. It fails with ErrDuplicateMember when
// another live session owns it, or when this session does but another
// Manager registered it. A znode owned by a session this process held
// before (sess.HeldBefore: ZooKeeper has not ended it yet) is ours: it is
// deleted and created again. A znode that vanishes between our create and
// our check (its session just ended) is created again, a few times at most.
func register(ctx context.Context, sess *recipe.Session, p string, session int64, instance []byte, acl []zk.ACL) error {
	for range 3 {
		_, err := sess.Create(ctx, p, instance, zk.FlagEphemeral, acl)
		if err == nil {
			return nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("register member %s: %w", p, err)
		}
		data, st, err := sess.Get(ctx, p)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue
		case err != nil:
			return fmt.Errorf("register member %s: %w", p, err)
		case st.EphemeralOwner != session && sess.HeldBefore(st.EphemeralOwner):
			if err := sess.Delete(ctx, p, st.Version); err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
				return fmt.Errorf("register member %s: delete the znode of our earlier session 0x%x: %w", p, st.EphemeralOwner, err)
			}
			log := sess.Logger()
			log.Info().Int64("session_id", session).Int64("earlier_session_id", st.EphemeralOwner).
				Msg("member znode owned by an earlier session of ours: deleted, registering again")
			continue
		case st.EphemeralOwner != session:
			return fmt.Errorf("%w: %s is owned by session 0x%x", ErrDuplicateMember, p, st.EphemeralOwner)
		case !bytes.Equal(data, instance):
			return fmt.Errorf("%w: %s is registered by another Manager on this session", ErrDuplicateMember, p)
		}
		return nil
	}
	return fmt.Errorf("register member %s: created and deleted by others repeatedly", p)
}

// keepRegistered re-creates the member znode whenever it disappears (the
// session expired, or someone deleted it) until ctx is done. A duplicate
// found on the way is reported on fail and ends the loop.
func keepRegistered(ctx context.Context, sess *recipe.Session, p string, instance []byte, acl []zk.ACL, log zerolog.Logger, fail func(error)) {
	retry := newBackoff()
	for ctx.Err() == nil {
		next := sess.NextConnect() // a new session ends the pause
		err := registeredOnce(ctx, sess, p, instance, acl, log)
		switch {
		case errors.Is(err, ErrDuplicateMember):
			fail(err)
			return
		case err != nil && ctx.Err() == nil: // not our own leaving
			log.Warn().Err(err).Msg("keep member registered")
			retry.waitOr(ctx, next)
		default:
			retry.reset()
		}
	}
}

// registeredOnce watches the member znode, registers it again if it is
// missing or owned by an older session, and waits until it may have
// changed or ctx ends.
func registeredOnce(ctx context.Context, sess *recipe.Session, p string, instance []byte, acl []zk.ACL, log zerolog.Logger) error {
	ctx, forget := context.WithCancel(ctx)
	defer forget() // the watch, if it has not fired
	ok, st, ch, err := sess.ExistsW(ctx, p)
	if err != nil {
		return fmt.Errorf("watch own member znode: %w", err)
	}
	if id := sess.ID(); !ok || st.EphemeralOwner != id {
		if err := register(ctx, sess, p, id, instance, acl); err != nil {
			return err
		}
		log.Info().Int64("session_id", id).Msg("member registered again")
	}
	rootdata.WaitWatch(ctx, ch)
	return nil
}

// registeredHere reports whether the member znode p is registered by
// this Manager: owned by session (ours) with instance (ours) as its data.
func registeredHere(ctx context.Context, sess *recipe.Session, p string, session int64, instance []byte) (bool, error) {
	data, st, err := sess.Get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read member znode %s: %w", p, err)
	}
	return session != 0 && st.EphemeralOwner == session && bytes.Equal(data, instance), nil
}

// errNotRegistered refuses a record write over another writer's: this
// Manager does not hold its member id now (another live session does, or
// it is not registered again yet after its session expired).
var errNotRegistered = errors.New("partition: record changed by another writer and the member id is not registered by this Manager")

// publisher writes the member's record, the latest version only, at most
// once per gap. A write is conditional on the record's version
// this member last wrote or read, so that a stale member (one whose id
// another live session now holds) cannot overwrite a newer record: when
// another writer changed it, the record is overwritten only while this
// Manager holds the member id (registered reports that).
type publisher struct {
	sess       *recipe.Session
	path       string
	acl        []zk.ACL // of the record when created
	log        zerolog.Logger
	registered func(context.Context) (bool, error)

	// version is the record's version we last wrote or read, when known.
	// One goroutine at a time uses them: adoptOwnRecord before start, then
	// the writer, then writeFinalRecord after wait.
	version int32
	known   bool

	mu      sync.Mutex
	pending *record
	kick    chan struct{}
	wg      sync.WaitGroup
	slow    atomic.Int64 // recent slowest write, in ns, decaying
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

// newPublisher returns the publisher of the record at p, created with acl;
// registered reports whether this Manager holds the member id now.
func newPublisher(sess *recipe.Session, p string, acl []zk.ACL, registered func(context.Context) (bool, error), log zerolog.Logger) *publisher {
	return &publisher{sess: sess, path: p, acl: acl, registered: registered, log: log, kick: make(chan struct{}, 1)}
}

// read notes the version of the record as just read.
func (p *publisher) read(version int32) { p.version, p.known = version, true }

// set queues r to be written, replacing any version not written yet.
func (p *publisher) set(r record) {
	p.mu.Lock()
	p.pending = &r
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
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
			if p.flush(ctx) {
				continue // the session was replaced: the record it calls for is written without the gap
			}
			t := time.NewTimer(p.gap())
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
	}()
}

func (p *publisher) wait() { p.wg.Wait() }

// flush writes the pending record, retrying until it is written or ctx is
// done. A newer record queued meanwhile is written on the next kick. It
// reports whether the record was written on another session than the one
// it was first tried on: the record written then is the old session's,
// and the loop is about to queue the new session's (its reservations,
// loopgrace.go), which start writes at once rather than after the gap.
func (p *publisher) flush(ctx context.Context) (renewed bool) {
	retry := newBackoff()
	first := p.sess.ID()
	for ctx.Err() == nil {
		p.mu.Lock()
		r := p.pending
		p.pending = nil
		p.mu.Unlock()
		if r == nil {
			return false
		}
		start, sess, connected, next := time.Now(), p.sess.ID(), p.sess.Connected(), p.sess.NextConnect()
		err := p.write(ctx, *r)
		if err == nil {
			if connected && p.sess.ID() == sess { // not a wait for a connection
				p.observeWrite(time.Since(start))
			}
			return sess != first
		}
		if errors.Is(err, rootdata.ErrRecordTooLarge) {
			p.log.Error().Err(err).Msg("member record not published")
			return false
		}
		if ctx.Err() == nil { // not stopped: the final record follows
			p.log.Warn().Err(err).Msg("publish member record")
		}
		p.mu.Lock()
		if p.pending == nil {
			p.pending = r
		}
		p.mu.Unlock()
		retry.waitOr(ctx, next) // a new session ends the pause
	}
	return false
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
