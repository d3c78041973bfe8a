package zkconn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"time"
)

// A name is looked up with a bound of its own, in seconds, not a slice of
// the handshake's: cluster DNS that answers correctly in a second or more
// (Kubernetes' conntrack races, kubernetes#56903 and coredns#3163, add 5s)
// is slow, not absent. The hosts file is read first, afresh at every
// lookup (hostsfile.go), so a server that moved behind a name in it is
// reached at once, not after the resolver's 5s cache of the file; other
// names go to the resolver (net.Resolver). A lookup runs on its own,
// bounded by maxLookup, and a dial waits for it:
//
//   - with an answer in hand for the entry (its last resolution), at most
//     cachedWait: a slow resolver costs a reconnect no more than that, the
//     dial goes on with the answer in hand, and the lookup, still running,
//     updates it when it comes;
//   - without one, before the first session, the lookup wait, which starts
//     at minLookupWait, doubles after each wait that ended before the
//     answer (up to maxLookupWait), and is set to half as much again as a
//     lookup's time after each answer, as the handshake's bound does
//     (wire.go); once a session is held, no longer than the dial's own
//     bound, so a name never resolved does not keep the other servers
//     waiting while the session timeout runs. A dial that stops waiting
//     fails that attempt; the next dial of the entry waits on the same
//     lookup, whose answer then serves.
//
// So Dial fails for DNS only when no name resolved within its connect
// timeout. A lookup slower than slowLookup is logged once per name, with
// its time.
const (
	minLookupWait = 2 * time.Second
	maxLookupWait = 16 * time.Second
	maxLookup     = 30 * time.Second
	cachedWait    = 250 * time.Millisecond
	slowLookup    = 250 * time.Millisecond
)

// lookupCall is one lookup of an entry's host in flight; done is closed
// once addrs or err is set.
type lookupCall struct {
	done  chan struct{}
	addrs []string
	err   error
}

// resolve returns host's addresses (entry's), shuffled; bound is the
// dial's.
func (r *resolver) resolve(entry, host string, bound time.Duration) ([]string, error) {
	if net.ParseIP(host) != nil {
		return []string{host}, nil
	}
	if addrs := hostsFileAddrs(r.hosts, host); len(addrs) > 0 {
		r.noteAddresses(entry, addrs)
		return shuffled(addrs), nil
	}
	call, cached, wait, err := r.startLookup(entry, host)
	if err != nil {
		return nil, err
	}
	switch {
	case cached != nil:
		wait = cachedWait
	case r.held():
		wait = min(wait, max(bound, cachedWait))
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-call.done:
		if call.err != nil {
			return nil, call.err
		}
		return shuffled(call.addrs), nil
	case <-t.C:
	case <-r.ctx.Done():
		return nil, &ResolveError{Server: entry, Err: r.ctx.Err()}
	}
	if cached != nil {
		return shuffled(cached), nil
	}
	re := &ResolveError{Server: entry, Err: fmt.Errorf("lookup of %s not answered within %v (it goes on; the next attempt waits longer)", host, wait)}
	r.mu.Lock()
	r.unresolved[entry] = re
	r.wait = min(2*r.wait, maxLookupWait)
	r.mu.Unlock()
	return nil, re
}

// startLookup returns entry's lookup in flight, starting one when none
// is, with the answer in hand for entry (nil when none) and how long a
// dial without one waits. Once the resolver closed it starts none and
// returns a ResolveError (errResolverClosed).
func (r *resolver) startLookup(entry, host string) (call *lookupCall, cached []string, wait time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, nil, 0, &ResolveError{Server: entry, Err: errResolverClosed}
	}
	cached, wait = slices.Clone(r.addresses[entry]), r.wait
	if call = r.inflight[entry]; call != nil {
		return call, cached, wait, nil
	}
	call = &lookupCall{done: make(chan struct{})}
	r.inflight[entry] = call
	r.running.Add(1)
	go r.runLookup(call, entry, host)
	return call, cached, wait, nil
}

// runLookup looks host up under maxLookup and records the answer.
func (r *resolver) runLookup(call *lookupCall, entry, host string) {
	defer r.running.Done()
	ctx, cancel := context.WithTimeout(r.ctx, maxLookup)
	defer cancel()
	start := time.Now()
	addrs, err := r.lookup(ctx, host)
	took := time.Since(start)
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("no address for %s", host)
	}
	r.mu.Lock()
	delete(r.inflight, entry)
	logSlow := took > slowLookup && !r.slow[entry]
	if logSlow {
		r.slow[entry] = true
	}
	if err == nil {
		r.wait = min(max(minLookupWait, took*3/2), maxLookupWait)
	}
	r.mu.Unlock()
	if logSlow {
		r.log.Warn().Str("server", entry).Dur("took", took).Err(err).
			Msg("zookeeper server name lookup is slow; reconnects use its last answer meanwhile")
	}
	if err != nil {
		re := &ResolveError{Server: entry, Err: err}
		r.mu.Lock()
		r.unresolved[entry] = re
		r.mu.Unlock()
		if r.ctx.Err() == nil {
			r.log.Warn().Str("server", entry).Err(re).
				Msg("zookeeper server name does not resolve; skipped until the next round")
		}
		call.err = re
	} else {
		r.noteAddresses(entry, addrs)
		call.addrs = addrs
	}
	close(call.done)
}

// shuffled returns a shuffled copy of addrs.
func shuffled(addrs []string) []string {
	out := slices.Clone(addrs)
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
