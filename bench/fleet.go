package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// fleet is a set of partition members in this process over one root,
// tracking who acts as the leader of each shard and how often a shard
// moved to another member.
type fleet struct {
	e        *env
	reg      *prometheus.Registry // the members' sessions' metrics
	root     string
	shards   []string
	expected int           // the members' ExpectedMembers (0: StartupSettle alone)
	proxied  string        // the member addTogether starts through a proxy, so that crash can silence it ("": none)
	changed  chan struct{} // capacity 1: a leadership started or stopped

	mu      sync.Mutex
	members map[string]*fleetMember
	leading map[string]string // shard -> member acting as its leader
	per     map[string]int    // member -> shards in leading it leads (so converged need not scan leading)
	last    map[string]string // shard -> member that led it last
	moved   map[string]int    // shard -> moves since the last takeMoves
	allLed  time.Time         // when every shard first had a leader
	drained map[string]bool   // members that must lead nothing (operator Drain)
}

type fleetMember struct {
	id      string
	sess    *recipe.Session
	m       *partition.Manager
	proxy   *testenv.Proxy // nil: a direct session
	crashed bool           // silenced by crash
	cancel  context.CancelFunc
	done    chan error
}

// newFleet returns a fleet over shards shards, its bookkeeping sized for
// them up front (so that a heap reading taken next counts the members'
// cost, not the fleet's).
func (e *env) newFleet(root string, shards int) *fleet {
	return &fleet{e: e, reg: prometheus.NewRegistry(), root: root, shards: shardIDs(e.shardIDs, shards), changed: make(chan struct{}, 1),
		members: map[string]*fleetMember{}, leading: make(map[string]string, shards), per: map[string]int{}, last: make(map[string]string, shards),
		moved: make(map[string]int, shards)}
}

// add starts member id (its own session and Manager).
func (f *fleet) add(ctx context.Context, id string) error {
	return f.addVia(ctx, id, nil)
}

// addTogether starts members m0, m1, ... at once, each connecting its own
// session in parallel, as separate processes started together would.
func (f *fleet) addTogether(ctx context.Context, members int) error {
	errs := make([]error, members)
	var wg sync.WaitGroup
	for i := range members {
		wg.Go(func() { errs[i] = f.addMaybeProxied(ctx, fmt.Sprintf("m%d", i)) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// addMaybeProxied starts member id, through a new proxy if it is
// f.proxied.
func (f *fleet) addMaybeProxied(ctx context.Context, id string) error {
	if id != f.proxied {
		return f.add(ctx, id)
	}
	p, err := f.e.cluster.NewProxy()
	if err != nil {
		return fmt.Errorf("bench: proxy: %w", err)
	}
	if err := f.addVia(ctx, id, p); err != nil {
		_ = p.Close()
		return err
	}
	return nil
}

// coldStart starts members members together and returns when it started
// them and how long until every shard was led and balanced, bounded by
// ctx and limit.
func (f *fleet) coldStart(ctx context.Context, members int, limit time.Duration) (start time.Time, took time.Duration, err error) {
	start = time.Now()
	if err := f.addTogether(ctx, members); err != nil {
		return start, 0, err
	}
	done, err := f.awaitConverged(ctx, limit)
	if err != nil {
		return start, 0, err
	}
	return start, done.Sub(start), nil
}

// closeWithin closes the fleet, bounded by limit even once ctx is done
// (a deferred cleanup).
func (f *fleet) closeWithin(ctx context.Context, limit time.Duration) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	_ = f.close(cctx)
}

// addVia starts member id with its session through proxy (direct when nil),
// so that crash can silence it.
func (f *fleet) addVia(ctx context.Context, id string, proxy *testenv.Proxy) error {
	var servers []string
	if proxy != nil {
		servers = proxy.Addrs()
	}
	sess, err := f.e.session(ctx, servers, recipe.WithMetrics(f.reg))
	if err != nil {
		return err
	}
	m, err := partition.NewManager(sess, f.root, partition.Config{
		MemberID: id, Shards: f.shards, StartupSettle: f.settle(), ExpectedMembers: f.expected,
		MaxConcurrentHandoffs: f.e.maxHandoffs,
		OnStartedLeading:      func(_ context.Context, shard string, _ zxidfence.Token) { f.started(id, shard) },
		OnStoppedLeading:      func(shard string, _ error) { f.stopped(id, shard) },
	})
	if err != nil {
		_ = sess.Close()
		return fmt.Errorf("bench: manager %s: %w", id, err)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	fm := &fleetMember{id: id, sess: sess, m: m, proxy: proxy, cancel: cancel, done: make(chan error, 1)}
	f.mu.Lock()
	f.members[id] = fm
	f.mu.Unlock()
	go func() { fm.done <- m.Run(rctx) }()
	return nil
}

// remove stops member id gracefully and waits for its Run to return.
func (f *fleet) remove(ctx context.Context, id string) error {
	f.mu.Lock()
	fm := f.members[id]
	delete(f.members, id)
	f.mu.Unlock()
	if fm == nil {
		return nil
	}
	if fm.proxy != nil {
		fm.proxy.Heal()
		defer fm.proxy.Close()
	}
	fm.cancel()
	defer fm.sess.Close()
	select {
	case err := <-fm.done:
		if err != nil {
			return fmt.Errorf("bench: member %s: %w", id, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("bench: stopping member %s: %w", id, ctx.Err())
	}
}

// crash silences member id as a crashed process would look to ZooKeeper:
// its connection blackholed, so its session expires and its leaderships
// end (its lease first). It no longer counts as live; remove heals the
// proxy and ends its Run. Only a member added through a proxy can crash.
func (f *fleet) crash(id string) {
	f.mu.Lock()
	fm := f.members[id]
	if fm != nil && fm.proxy != nil {
		fm.crashed = true
		fm.proxy.Blackhole()
	}
	f.mu.Unlock()
}

// managers returns the Managers of the live (not crashed) members.
func (f *fleet) managers() map[string]*partition.Manager {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]*partition.Manager{}
	for id, fm := range f.members {
		if !fm.crashed {
			out[id] = fm.m
		}
	}
	return out
}

// settle is the members' StartupSettle: the default, or 3 s from
// boundSteps shards, where members added one after another on a loaded
// machine register further apart than the default's 1.2 s at most, and
// the first one up would start every election and hand most on.
func (f *fleet) settle() time.Duration {
	if len(f.shards) >= boundSteps {
		return 3 * time.Second
	}
	return 0
}

// firstAllLed returns when every shard first had a leader (zero if never).
func (f *fleet) firstAllLed() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.allLed
}

// loads describes how many shards each member leads.
func (f *fleet) loads() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := slices.Sorted(maps.Keys(f.per))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if f.per[id] > 0 {
			out = append(out, fmt.Sprintf("%s %d", id, f.per[id]))
		}
	}
	return strings.Join(out, ", ")
}

// close stops every member.
func (f *fleet) close(ctx context.Context) error {
	f.mu.Lock()
	var ids []string
	for id := range f.members {
		ids = append(ids, id)
	}
	f.mu.Unlock()
	errs := make(chan error, len(ids))
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() { errs <- f.remove(ctx, id) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *fleet) started(id, shard string) {
	f.mu.Lock()
	if prev := f.last[shard]; prev != "" && prev != id {
		f.moved[shard]++
	}
	if cur, ok := f.leading[shard]; ok {
		f.per[cur]-- // it had not told its stop yet
	}
	f.per[id]++
	f.leading[shard], f.last[shard] = id, id
	if f.allLed.IsZero() && len(f.leading) == len(f.shards) {
		f.allLed = time.Now()
	}
	f.mu.Unlock()
	f.signal()
}

func (f *fleet) stopped(id, shard string) {
	f.mu.Lock()
	if f.leading[shard] == id {
		delete(f.leading, shard)
		f.per[id]--
	}
	f.mu.Unlock()
	f.signal()
}

func (f *fleet) signal() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// converged reports whether every shard has a leader among the live
// members that are not drained and none leads more than its share,
// ceil(shards/members). It reads the per-member counts, not every shard.
func (f *fleet) converged() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	live := 0
	for id, fm := range f.members {
		if !fm.crashed && !f.drained[id] {
			live++
		}
	}
	if len(f.leading) != len(f.shards) || live == 0 {
		return false
	}
	share := (len(f.shards) + live - 1) / live
	for id, n := range f.per {
		if n == 0 {
			continue
		}
		if fm := f.members[id]; fm == nil || fm.crashed || f.drained[id] || n > share {
			return false
		}
	}
	return true
}

// setDrained marks member id as drained (it must lead nothing to
// converge) or not.
func (f *fleet) setDrained(id string, drained bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.drained == nil {
		f.drained = map[string]bool{}
	}
	f.drained[id] = drained
}

// awaitConverged waits until converged, bounded by ctx and limit, and
// returns when it first was. At limit it returns an error wrapping
// errNotBalanced.
func (f *fleet) awaitConverged(ctx context.Context, limit time.Duration) (time.Time, error) {
	t := time.NewTimer(limit)
	defer t.Stop()
	for !f.converged() {
		select {
		case <-f.changed:
		case <-t.C:
			return time.Time{}, fmt.Errorf("bench: %d shards %w after %s (%d led: %s)", len(f.shards), errNotBalanced, limit, f.ledCount(), f.loads())
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("bench: waiting for convergence: %w", ctx.Err())
		}
	}
	return time.Now(), nil
}

// errNotBalanced is awaitConverged's error at its limit.
var errNotBalanced = errors.New("not balanced")

func (f *fleet) ledCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.leading)
}

// takeMoves returns the moves counted so far, per shard, and resets them.
func (f *fleet) takeMoves() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.moved
	f.moved = map[string]int{}
	return m
}

// ledBy returns the shards member id leads now.
func (f *fleet) ledBy(id string) map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]bool{}
	for shard, m := range f.leading {
		if m == id {
			out[shard] = true
		}
	}
	return out
}

// countMoves sums moves, and those of shards outside own.
func countMoves(moved map[string]int, own map[string]bool) (total, others int) {
	for shard, n := range moved {
		total += n
		if !own[shard] {
			others += n
		}
	}
	return total, others
}

// creates returns how many candidate znodes the members' sessions have
// created so far (successful creates, from their request metrics).
func (f *fleet) creates() (int, error) {
	mfs, err := f.reg.Gather()
	if err != nil {
		return 0, fmt.Errorf("bench: gather fleet metrics: %w", err)
	}
	n := 0
	for _, mf := range mfs {
		if mf.GetName() != "zkelect_zookeeper_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m.GetLabel(), "op", "create", "result", "ok") {
				n += int(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return n, nil
}

// hasLabels reports whether labels hold every name/value pair in kv.
func hasLabels(labels []*dto.LabelPair, kv ...string) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		found := false
		for _, l := range labels {
			if l.GetName() == kv[i] && l.GetValue() == kv[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
