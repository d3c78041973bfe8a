package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// acquisition is one candidate taking leadership, stamped when Campaign
// returned.
type acquisition struct {
	c  *contender
	at time.Time
	l  *recipe.Leadership
}

// contender is one candidate on its own session (optionally behind a
// proxy), campaigning in a loop and reporting each leadership it takes.
type contender struct {
	name  string
	proxy *testenv.Proxy // nil when connected directly
	sess  *recipe.Session
	cand  *recipe.Candidate
	// rejoin lets the loop campaign again after a resign, once Resign has
	// returned (a Campaign racing a Resign would re-enter the election
	// while the resign is still withdrawing).
	rejoin chan struct{}
}

// election runs contenders for one election path and reports their
// acquisitions on one channel.
type election struct {
	path     string
	all      []*contender
	acquired chan acquisition
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// newElection starts n contenders on path, each on its own session, behind
// its own proxy when proxied is set.
func (e *env) newElection(ctx context.Context, path string, n int, proxied bool) (*election, error) {
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	el := &election{path: path, acquired: make(chan acquisition, n), cancel: cancel}
	for i := range n {
		c, err := e.newContender(ctx, path, fmt.Sprintf("c%d", i), proxied)
		if err != nil {
			el.close()
			return nil, err
		}
		el.all = append(el.all, c)
		el.wg.Go(func() { c.campaign(lctx, el.acquired) })
	}
	return el, nil
}

func (e *env) newContender(ctx context.Context, path, name string, proxied bool) (*contender, error) {
	c := &contender{name: name, rejoin: make(chan struct{}, 1)}
	servers := e.cluster.Addrs()
	if proxied {
		p, err := e.cluster.NewProxy()
		if err != nil {
			return nil, fmt.Errorf("bench: proxy: %w", err)
		}
		c.proxy, servers = p, p.Addrs()
	}
	s, err := e.session(ctx, servers)
	if err != nil {
		c.close()
		return nil, err
	}
	c.sess = s
	cand, err := recipe.NewCandidate(s, path, recipe.WithParticipantID(name))
	if err != nil {
		c.close()
		return nil, fmt.Errorf("bench: candidate: %w", err)
	}
	c.cand = cand
	return c, nil
}

// campaign campaigns until ctx ends, reporting every leadership.
func (c *contender) campaign(ctx context.Context, out chan<- acquisition) {
	for {
		l, err := c.cand.Campaign(ctx)
		if err != nil {
			return // ctx ended or the candidate closed
		}
		select {
		case out <- acquisition{c: c, at: time.Now(), l: l}:
		case <-ctx.Done():
			return
		}
		select {
		case <-l.Done():
		case <-ctx.Done():
			return
		}
		if errors.Is(l.Err(), recipe.ErrResigned) {
			select {
			case <-c.rejoin:
			case <-ctx.Done():
				return
			}
		}
	}
}

// resign resigns l and lets the contender campaign again. It waits at most
// acquireLimit for the deletion to be confirmed.
func (c *contender) resign(ctx context.Context, l *recipe.Leadership) error {
	select { // a rejoin left over from a leadership that ended by itself
	case <-c.rejoin:
	default:
	}
	rctx, cancel := context.WithTimeout(ctx, acquireLimit)
	defer cancel()
	err := l.Resign(rctx)
	select {
	case c.rejoin <- struct{}{}:
	default:
	}
	if err != nil {
		return fmt.Errorf("bench: resign: %w", err)
	}
	return nil
}

func (c *contender) close() {
	if c.cand != nil {
		_ = c.cand.Close()
	}
	if c.proxy != nil {
		c.proxy.Heal()
	}
	if c.sess != nil {
		_ = c.sess.Close()
	}
	if c.proxy != nil {
		_ = c.proxy.Close()
	}
}

// next waits for the next acquisition, bounded by ctx and limit.
func (el *election) next(ctx context.Context, limit time.Duration, what string) (acquisition, error) {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case a := <-el.acquired:
		return a, nil
	case <-ctx.Done():
		return acquisition{}, fmt.Errorf("bench: waiting for %s: %w", what, ctx.Err())
	case <-t.C:
		return acquisition{}, fmt.Errorf("bench: no leader %s after %s: %w", what, limit, errNoLeader)
	}
}

var errNoLeader = errors.New("no leader")

// current returns the contender that leads now, waiting for one. Older
// acquisitions still queued are dropped.
func (el *election) current(ctx context.Context) (acquisition, error) {
	for {
	drain:
		for {
			select {
			case <-el.acquired:
			default:
				break drain
			}
		}
		for _, c := range el.all {
			if l := c.cand.Leadership(); l != nil && l.Leading() {
				return acquisition{c: c, l: l, at: time.Now()}, nil
			}
		}
		a, err := el.next(ctx, acquireLimit, "at all")
		if err != nil {
			return acquisition{}, err
		}
		if a.l.Leading() {
			return a, nil
		}
	}
}

// successor waits for the first leadership taken after start by a
// contender other than prev.
func (el *election) successor(ctx context.Context, prev *contender, start time.Time, what string) (acquisition, error) {
	for {
		a, err := el.next(ctx, acquireLimit, what)
		if err != nil {
			return acquisition{}, err
		}
		if a.c != prev && !a.at.Before(start) {
			return a, nil
		}
	}
}

// close stops every contender and waits for their loops.
func (el *election) close() {
	el.cancel()
	var wg sync.WaitGroup
	for _, c := range el.all {
		wg.Go(c.close)
	}
	wg.Wait()
	el.wg.Wait()
}
