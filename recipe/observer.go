package recipe

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/internal/zkconn"
)

// This file is the loop behind Observe.

// observeRetryMin and observeRetryMax bound the pause of Observe between
// attempts to read an election it could not read.
const (
	observeRetryMin = 50 * time.Millisecond
	observeRetryMax = 2 * time.Second
)

// observer is the state of one Observe call. Session changes wake its
// loop; its node watches are the session's one-shot watches (GetW and
// friends), one set per read, each read's released once the next one has
// armed its own.
type observer struct {
	s    *Session
	path string
	out  chan<- Observation
	kick chan struct{} // capacity 1: wake-ups coalesce
	last *Observation
}

func (o *observer) wake() {
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// run is the loop behind Observe: read the leader and arm one watch, report
// a change, sleep until the watch fires or a session event, again.
func (o *observer) run(ctx context.Context) {
	defer close(o.out)
	k := &sink{session: func(zkconn.Event) { o.wake() }} // routes no path
	o.s.conn.Subscribe(k)
	defer o.s.conn.Unsubscribe(k)
	release := func() {} // forgets the previous read's watches
	defer func() { release() }()
	backoff := retry.Backoff{Min: observeRetryMin, Max: observeRetryMax}
	for {
		readCtx, cancel := context.WithCancel(ctx)
		obs, fired, readErr := o.read(readCtx)
		release()
		release = cancel
		if ctx.Err() != nil || !o.report(ctx, obs) {
			return
		}
		if obs.Err != nil && !transient(obs.Err) {
			return
		}
		wait := time.Duration(0) // until woken
		if readErr != nil {
			wait = backoff.Next()
		} else if obs.Err == nil {
			backoff.Reset()
		}
		if !o.sleep(ctx, wait, fired) {
			return
		}
	}
}

// read returns the current observation and the watch that fires when it
// may change (nil if none was armed); the watch lasts until ctx ends.
// readErr is set when a read failed, as opposed to the session being
// unusable, which only waits for a session event.
func (o *observer) read(ctx context.Context) (obs Observation, fired <-chan zk.Event, readErr error) {
	select {
	case <-o.s.Done():
		return Observation{Err: fmt.Errorf("observe %s: %w", o.path, ErrSessionClosed)}, nil, nil
	default:
	}
	switch id, usable := o.s.conn.Usable(); {
	case !usable && id == 0:
		return Observation{Err: fmt.Errorf("observe %s: %w", o.path, ErrSessionExpired)}, nil, nil
	case !usable:
		return Observation{Err: fmt.Errorf("observe %s: %w", o.path, ErrSuspended)}, nil, nil
	}
	r, err := o.watchLeader(ctx)
	if err != nil {
		return Observation{Err: fmt.Errorf("observe %s: %w", o.path, err)}, nil, err
	}
	return Observation{Leader: r.leader, HasLeader: r.ok}, r.fired, nil
}

// report sends obs if it tells the reader something new; false if ctx ended
// first.
func (o *observer) report(ctx context.Context, obs Observation) bool {
	if o.last != nil && sameObservation(*o.last, obs) {
		return true
	}
	select {
	case o.out <- obs:
		o.last = &obs
		return true
	case <-ctx.Done():
		return false
	}
}

// sameObservation reports whether b tells the reader nothing new after a.
func sameObservation(a, b Observation) bool {
	if (a.Err == nil) != (b.Err == nil) || a.HasLeader != b.HasLeader {
		return false
	}
	if a.Err != nil {
		return a.Err.Error() == b.Err.Error()
	}
	return !a.HasLeader || a.Leader == b.Leader
}

// sleep waits for a wake-up, the watch fired (if not nil), d (when d > 0),
// the session's Close or ctx; it reports whether to go on. Close is waited
// for itself: its Closed event can wake the observer before the session
// reports itself closed, and a read in between finds it only unusable
// (ErrSuspended), after which no other event comes.
func (o *observer) sleep(ctx context.Context, d time.Duration, fired <-chan zk.Event) bool {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-o.kick:
	case <-fired:
	case <-timeout:
	case <-o.s.Done():
	case <-ctx.Done():
		return false
	}
	return true
}

// transient reports whether Observe should try again after err.
func transient(err error) bool {
	return !errors.Is(err, ErrSessionClosed) && !errSessionGone(err) &&
		!errors.Is(err, ErrInvalidPath) && !errors.Is(err, ErrNilSession)
}

// leaderWatch is one read of the leader and the watch it armed.
type leaderWatch struct {
	readResult
	fired <-chan zk.Event
}

// watchLeader reads the leader and arms one watch that fires when it may
// have changed: on the leader's znode, on path's children when there is no
// candidate, or on path's existence when path is missing. The watches it
// arms last until ctx ends; the last one armed is the one returned.
func (o *observer) watchLeader(ctx context.Context) (leaderWatch, error) {
	s, path := o.s, o.path
	plain := func(p string) ([]byte, *zk.Stat, error) { return s.conn.Get(ctx, p) }
	var w leaderWatch
	for {
		names, _, err := s.conn.Children(ctx, path)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			var exists bool
			exists, _, w.fired, err = s.ExistsW(ctx, path)
			if err != nil || !exists {
				return w, err
			}
			continue // created meanwhile
		case err != nil:
			return w, aclError("list", path, err)
		}
		if len(parseNodes(names)) == 0 {
			names, _, w.fired, err = s.ChildrenW(ctx, path)
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			if err != nil || len(parseNodes(names)) == 0 {
				return w, err
			}
			// Someone joined meanwhile: read the leader; the child watch
			// fires once later and costs one more read.
		}
		get := func(p string) ([]byte, *zk.Stat, error) {
			data, st, fired, err := s.GetW(ctx, p)
			if err == nil {
				w.fired = fired
			}
			return data, st, err
		}
		r, found, err := leaderOf(path, names, get, plain)
		if err != nil || found {
			w.readResult = r
			return w, err
		}
	}
}
