package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// This file is the loop behind Observe.

// observeRetryMin and observeRetryMax bound the pause of Observe between
// attempts to read an election it could not read.
const (
	observeRetryMin = 50 * time.Millisecond
	observeRetryMax = 2 * time.Second
)

// observer is the state of one Observe call. It is a sessionSink: session
// changes and watch events on the paths routed to it wake its loop.
type observer struct {
	s    *Session
	path string
	out  chan<- Observation
	kick chan struct{} // capacity 1: wake-ups coalesce
	last *Observation

	mu      sync.Mutex      // guards routed and stopped: a read abandoned by ctx may still route
	routed  map[string]bool // paths whose watch events wake the observer
	stopped bool
}

// sessionChanged and nodeChanged run on go-zookeeper's goroutine with the
// session's lock held: they only wake the loop.
func (o *observer) sessionChanged(sessionEvent) { o.wake() }
func (o *observer) nodeChanged(zk.Event)        { o.wake() }

func (o *observer) wake() {
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// run is the loop behind Observe: read the leader and arm one watch, report
// a change, sleep until a watch or session event, again.
func (o *observer) run(ctx context.Context) {
	defer close(o.out)
	o.s.subscribe(o)
	defer o.stop()
	retry := observeRetryMin
	for {
		obs, readErr := o.read(ctx)
		if ctx.Err() != nil || !o.report(ctx, obs) {
			return
		}
		if obs.Err != nil && !transient(obs.Err) {
			return
		}
		wait := time.Duration(0) // until woken
		if readErr != nil {
			wait, retry = retry, min(2*retry, observeRetryMax)
		} else if obs.Err == nil {
			retry = observeRetryMin
		}
		if !o.sleep(ctx, wait) {
			return
		}
	}
}

// read returns the current observation. readErr is set when a read failed,
// as opposed to the session being unusable, which only waits for a session
// event.
func (o *observer) read(ctx context.Context) (obs Observation, readErr error) {
	select {
	case <-o.s.Done():
		return Observation{Err: fmt.Errorf("observe %s: %w", o.path, ErrSessionClosed)}, nil
	default:
	}
	switch id, usable := o.s.usable(); {
	case !usable && id == 0:
		return Observation{Err: fmt.Errorf("observe %s: %w", o.path, ErrSessionExpired)}, nil
	case !usable:
		return Observation{Err: fmt.Errorf("observe %s: %w", o.path, ErrSuspended)}, nil
	}
	r, err := callCtx(ctx, o.watchLeader)
	if err != nil {
		return Observation{Err: fmt.Errorf("observe %s: %w", o.path, err)}, err
	}
	return Observation{Leader: r.leader, HasLeader: r.ok}, nil
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

// sleep waits for a wake-up (or d, when d > 0) or ctx; it reports whether to
// go on.
func (o *observer) sleep(ctx context.Context, d time.Duration) bool {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-o.kick:
	case <-timeout:
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

// stop ends the observer's routing of session and watch events and removes
// its data watch from the server unless another user of the session shares
// it.
func (o *observer) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopped = true
	for p := range o.routed {
		o.s.dropWatch(p, o)
	}
	o.s.unsubscribe(o)
}

// errObserverStopped ends a read that outlived its Observe call.
var errObserverStopped = errors.New("recipe: observer stopped")

// route makes watch events of exactly the paths in keep, and no others,
// wake the observer, and then runs arm (if not nil) under the same lock, so
// stop cannot slip between them and leave a watch behind. Routing a path
// before arming its watch means no event is missed; a stale event costs one
// more read. It returns errObserverStopped after stop.
func (o *observer) route(arm func(), keep ...string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return errObserverStopped
	}
	for p := range o.routed {
		if !slices.Contains(keep, p) {
			o.s.dropWatch(p, o)
			delete(o.routed, p)
		}
	}
	for _, p := range keep {
		if !o.routed[p] {
			o.s.watchPath(p, o)
			o.routed[p] = true
		}
	}
	if arm != nil {
		arm()
	}
	return nil
}

// watchLeader reads the leader and arms one watch that fires when it may
// have changed: on the leader's znode, on path's children when there is no
// candidate, or on path's existence when path is missing.
func (o *observer) watchLeader() (readResult, error) {
	conn, path := o.s.Conn(), o.path
	for {
		names, _, err := conn.Children(path)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			if err := o.route(nil, path); err != nil {
				return readResult{}, err
			}
			exists, _, _, err := conn.ExistsW(path)
			if err != nil {
				return readResult{}, aclError("watch", path, err)
			}
			if !exists {
				return readResult{}, nil
			}
			continue // created meanwhile
		case err != nil:
			return readResult{}, aclError("list", path, err)
		}
		if len(candidates(names)) == 0 {
			if err := o.route(nil, path); err != nil {
				return readResult{}, err
			}
			names, _, _, err = conn.ChildrenW(path)
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			if err != nil {
				return readResult{}, aclError("watch", path, err)
			}
			if len(candidates(names)) == 0 {
				return readResult{}, nil
			}
			// Someone joined meanwhile: read the leader; the child watch
			// fires once later and costs one more read.
		}
		r, found, err := leaderOf(conn, path, names, o.watchData)
		if err != nil || found {
			return r, err
		}
	}
}

// watchData reads znode p and leaves a data watch on it, routed to the
// observer; the session sets it on the wire and removes it when its last
// user leaves (see datawatch.go).
func (o *observer) watchData(conn *zk.Conn, p string) ([]byte, *zk.Stat, error) {
	if err := o.route(func() { o.s.armDataWatch(p) }, p); err != nil {
		return nil, nil, err
	}
	return conn.Get(p)
}
