package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

const rawRoot = "/bench/raw"

// rawNotify measures, trials times, the time from sending a delete on one
// session to the data watch notification on another: the floor under every
// failover.
func (e *env) rawNotify(ctx context.Context, trials int) (Dist, error) {
	a, err := e.rawConn(ctx)
	if err != nil {
		return Dist{}, err
	}
	defer a.Close()
	b, err := e.rawConn(ctx)
	if err != nil {
		return Dist{}, err
	}
	defer b.Close()
	if err := ensurePath(a, rawRoot); err != nil {
		return Dist{}, err
	}
	samples := make([]time.Duration, 0, trials)
	for i := range trials {
		d, err := notifyOnce(ctx, a, b, fmt.Sprintf("%s/notify-%d", rawRoot, i))
		if err != nil {
			return Dist{}, err
		}
		samples = append(samples, d)
	}
	return NewDist(samples), nil
}

func notifyOnce(ctx context.Context, a, b *zk.Conn, path string) (time.Duration, error) {
	// Persistent, so that a session blip on a loaded machine cannot remove it.
	return timeDeletion(ctx, a, b, path, 0, func() error {
		if err := a.Delete(path, -1); err != nil {
			return fmt.Errorf("bench: delete %s: %w", path, err)
		}
		return nil
	})
}

// timeDeletion creates path on owner (with flags), has watcher watch it,
// then runs remove and times until watcher's notification of the
// deletion, bounded by ctx and acquireLimit.
func timeDeletion(ctx context.Context, owner, watcher *zk.Conn, path string, flags int32, remove func() error) (time.Duration, error) {
	if _, err := owner.Create(path, nil, flags, zk.WorldACL(zk.PermAll)); err != nil {
		return 0, fmt.Errorf("bench: create %s: %w", path, err)
	}
	watch, err := watchCreated(watcher, path)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := remove(); err != nil {
		return 0, err
	}
	t := time.NewTimer(acquireLimit)
	defer t.Stop()
	select {
	case ev := <-watch:
		if ev.Type != zk.EventNodeDeleted {
			return 0, fmt.Errorf("bench: watch on %s fired with %v, want a deletion", path, ev.Type)
		}
		return time.Since(start), nil
	case <-t.C:
		return 0, fmt.Errorf("bench: no deletion of %s seen %s after it was removed", path, acquireLimit)
	case <-ctx.Done():
		return 0, fmt.Errorf("bench: waiting for the deletion of %s: %w", path, ctx.Err())
	}
}

// watchCreated sets a data watch on path, which another session just
// created. The watcher's server may not have applied the create yet: it
// syncs first, and again when the read still finds no znode (the watcher
// reconnected meanwhile to a server further behind), a few times.
func watchCreated(watcher *zk.Conn, path string) (<-chan zk.Event, error) {
	var err error
	for range 3 {
		if _, err = watcher.Sync(path); err != nil {
			return nil, fmt.Errorf("bench: sync %s: %w", path, err)
		}
		var watch <-chan zk.Event
		if _, _, watch, err = watcher.GetW(path); err == nil {
			return watch, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			break
		}
	}
	return nil, fmt.Errorf("bench: watch %s: %w", path, err)
}

// rawCreate measures, trials times, the round trip of one ephemeral
// sequential create: a write through the quorum.
func (e *env) rawCreate(ctx context.Context, trials int) (Dist, error) {
	c, err := e.rawConn(ctx)
	if err != nil {
		return Dist{}, err
	}
	defer c.Close() // the session's ephemeral znodes go with it
	if err := ensurePath(c, rawRoot+"/rt"); err != nil {
		return Dist{}, err
	}
	samples := make([]time.Duration, 0, trials)
	for range trials {
		if err := ctx.Err(); err != nil {
			return Dist{}, fmt.Errorf("bench: create round trips: %w", err)
		}
		start := time.Now()
		if _, err := c.Create(rawRoot+"/rt/n-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
			return Dist{}, fmt.Errorf("bench: create: %w", err)
		}
		samples = append(samples, time.Since(start))
	}
	return NewDist(samples), nil
}

// rawThroughput creates n ephemeral sequential znodes on one session with
// inFlight requests outstanding and returns creates per second.
func (e *env) rawThroughput(ctx context.Context, n, inFlight int) (float64, error) {
	c, err := e.rawConn(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	dir := fmt.Sprintf("%s/tp-%d", rawRoot, time.Now().UnixNano())
	if err := ensurePath(c, dir); err != nil {
		return 0, err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, inFlight)
	start := time.Now()
	for range inFlight {
		wg.Go(func() {
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				if _, err := c.Create(dir+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
					errs <- fmt.Errorf("bench: create under %s: %w", dir, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("bench: create throughput: %w", err)
	}
	return float64(n) / elapsed.Seconds(), nil
}
