package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zkelect/zkelect/partition/operator"
	"github.com/zkelect/zkelect/recipe"
)

// The routing scenario: what a router sees of the elections, each piece
// its own process: three partition members and a router (partition/routing
// over ZooKeeper, 100 requests a second) on the run's ensemble. Each event
// class (drain, undrain, move, crash, restart within grace, resume after
// expiry) is timed from the members' own reports (OnStartedLeading, with
// the token) to the router's view showing that leadership, beside the
// election's own time (the command to each new leadership) and the
// delete→notification floor of the same run; every request is checked
// against who led its shard then (the members' reports).

// routingRate is the router's requests per second.
const routingRate = 100

// routingClasses are the event classes, in the order the scenario runs them.
var routingClasses = []string{"drain", "undrain", "move", "crash", "restart within grace", "resume after expiry"}

// stampedLine is one line of a child with its own stamp.
type stampedLine struct {
	who    string
	at     int64 // µs since the epoch (the child's stamp)
	fields []string
}

// routeProc is a child of the routing scenario whose lines are collected.
type routeProc struct {
	*peerProc
	id string
}

// routeRun is one shard count's run.
type routeRun struct {
	e       *env
	self    []string
	root    string
	shards  int
	timeout time.Duration

	mu    sync.Mutex
	lines []stampedLine
	ready chan struct{}
	once  sync.Once

	procs map[string]*routeProc
	wg    sync.WaitGroup
}

func (e *env) runRouting(ctx context.Context, cfg Config, rep *Report) error {
	f, err := e.floors(ctx, cfg)
	if err != nil {
		return err
	}
	self := cfg.ChildCommand
	if len(self) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find this executable to run the members: %w", err)
		}
		self = []string{exe}
	}
	for _, n := range cfg.RoutingShards {
		r := &routeRun{e: e, self: self, root: fmt.Sprintf("/bench/routing-%d-%d", n, time.Now().UnixNano()), shards: n,
			timeout: cfg.SessionTimeout, ready: make(chan struct{}), procs: map[string]*routeProc{}}
		results, err := r.run(ctx, cfg, f)
		r.stopAll()
		if err != nil {
			return fmt.Errorf("%d shards: %w", n, err)
		}
		rep.Results = append(rep.Results, results...)
	}
	return nil
}

// start starts a child (kind routeMemberArg or routerArg) named id.
func (r *routeRun) start(kind, id, extra string) error {
	argv := append(append([]string(nil), r.self...), kind, strings.Join(r.e.cluster.Addrs(), ","), r.root,
		strconv.Itoa(r.shards), millis(r.timeout), extra)
	p, err := startPeerProc(id, argv)
	if err != nil {
		return err
	}
	rp := &routeProc{peerProc: p, id: id}
	r.procs[id] = rp
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for l := range p.lines {
			f := strings.Fields(l.text)
			if len(f) == 1 && f[0] == "READY" {
				r.once.Do(func() { close(r.ready) })
				continue
			}
			if len(f) < 2 {
				continue
			}
			at, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				continue
			}
			r.mu.Lock()
			r.lines = append(r.lines, stampedLine{who: id, at: at, fields: f})
			r.mu.Unlock()
		}
	}()
	return nil
}

// stopAll kills every child and waits for their lines.
func (r *routeRun) stopAll() {
	for _, p := range r.procs {
		p.kill()
	}
	r.wg.Wait()
}

// snapshot returns the lines so far.
func (r *routeRun) snapshot() []stampedLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]stampedLine(nil), r.lines...)
}

// settle waits until a member reported a leadership after since (µs;
// 0: any), the router's view shows every shard led and no line of a
// leadership or of the view came for quiet, at most limit.
func (r *routeRun) settle(ctx context.Context, since int64, quiet, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ls := r.snapshot()
		led, last := viewState(ls)
		if led == r.shards && time.Since(last) > quiet && ledSince(ls, since) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not settled after %v: the router's view shows %d of %d shards led", limit, led, r.shards)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ledSince reports whether a member reported a leadership after since.
func ledSince(ls []stampedLine, since int64) bool {
	for _, l := range ls {
		if l.fields[0] == "LEAD" && l.at >= since {
			return true
		}
	}
	return false
}

// viewState returns how many shards the router's view shows led, and
// when a leadership or the view last changed.
func viewState(ls []stampedLine) (led int, last time.Time) {
	view := map[string]bool{}
	var lastAt int64
	for _, l := range ls {
		switch l.fields[0] {
		case "VIEW":
			view[l.fields[2]] = l.fields[3] != "-"
			lastAt = max(lastAt, l.at)
		case "LEAD", "STOP":
			lastAt = max(lastAt, l.at)
		}
	}
	for _, v := range view {
		if v {
			led++
		}
	}
	return led, time.UnixMicro(lastAt)
}

func (r *routeRun) run(ctx context.Context, cfg Config, f *floors) ([]Result, error) {
	members := []string{"m1", "m2", "m3"}
	for _, id := range members {
		if err := r.start(routeMemberArg, id, id); err != nil {
			return nil, err
		}
	}
	if err := r.start(routerArg, "router", strconv.Itoa(routingRate)); err != nil {
		return nil, err
	}
	limit := max(2*time.Minute, time.Duration(r.shards)*20*time.Millisecond)
	select {
	case <-r.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(limit):
		return nil, fmt.Errorf("the router gave no view in %v", limit)
	}
	if err := r.settle(ctx, 0, 2*time.Second, limit); err != nil {
		return nil, fmt.Errorf("cold start: %w", err)
	}
	sess, err := recipe.Connect(ctx, r.e.cluster.Addrs(), recipe.WithSessionTimeout(r.timeout))
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	op, err := operator.New(sess, r.root, nil)
	if err != nil {
		return nil, err
	}
	windows := map[string][2]int64{}
	costs := map[string]routeCost{}
	sid, _ := routerSession(r.snapshot())
	for _, class := range routingClasses {
		r.e.logf("bench: routing %d shards: %s", r.shards, class)
		before, _ := r.e.sessionCounters(ctx, sid)
		t0 := stamp()
		if err := r.event(ctx, op, class); err != nil {
			return nil, fmt.Errorf("%s: %w", class, err)
		}
		if err := r.settle(ctx, t0, 2*time.Second, limit); err != nil {
			return nil, fmt.Errorf("%s: %w", class, err)
		}
		windows[class] = [2]int64{t0, stamp()}
		after, err := r.e.sessionCounters(ctx, sid)
		own, all, werr := r.e.sessionWatches(ctx, sid)
		if err == nil && werr == nil && before.sent > 0 && after.sent >= before.sent { // the same connection throughout
			costs[class] = routeCost{sent: after.sent - before.sent, recved: after.recved - before.recved, watches: own, allWatches: all, ok: true}
		}
		if class == "crash" { // m2 joins again, untimed, for the restart within grace
			if err := r.start(routeMemberArg, "m2", "m2"); err != nil {
				return nil, err
			}
			if err := r.settle(ctx, 0, 2*time.Second, limit); err != nil {
				return nil, fmt.Errorf("m2 joining again after its crash: %w", err)
			}
		}
	}
	return r.results(windows, costs, f), nil
}

// routeCost is one event class's cost to the ensemble of the router.
type routeCost struct {
	sent, recved        int64 // packets the servers sent the router, requests it sent
	watches, allWatches int64 // the router's watches, every session's
	ok                  bool  // measured (no reconnect of the router within)
}

// event causes one event of class.
func (r *routeRun) event(ctx context.Context, op *operator.Operator, class string) error {
	switch class {
	case "drain":
		_, err := op.Drain(ctx, "m1", "bench")
		return err
	case "undrain":
		_, err := op.Undrain(ctx, "m1")
		return err
	case "move":
		led := leadersNow(r.snapshot())
		for s := range r.shards {
			if m := led[strconv.Itoa(s)]; m != "" && m != "m3" {
				_, err := op.Move(ctx, strconv.Itoa(s), "m3")
				return err
			}
		}
		return fmt.Errorf("no shard led outside m3 to move")
	case "crash":
		r.procs["m2"].kill()
		return nil
	case "restart within grace": // killed and started again at once: back within its grace
		r.procs["m2"].kill()
		return r.start(routeMemberArg, "m2", "m2")
	case "resume after expiry":
		p := r.procs["m3"]
		if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
			return err
		}
		select {
		case <-time.After(3 * r.timeout):
		case <-ctx.Done():
		}
		return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT)
	}
	return fmt.Errorf("unknown event class %q", class)
}

// leadersNow returns each shard's leader by the members' reports.
func leadersNow(ls []stampedLine) map[string]string {
	led := map[string]string{}
	for _, l := range ls {
		switch l.fields[0] {
		case "LEAD":
			led[l.fields[2]] = l.who
		case "STOP":
			if led[l.fields[2]] == l.who {
				delete(led, l.fields[2])
			}
		}
	}
	return led
}

// results computes each class's rows from the lines.
func (r *routeRun) results(windows map[string][2]int64, costs map[string]routeCost, f *floors) []Result {
	ls := r.snapshot()
	views := map[string]int64{} // shard/member/token → first time the view showed it
	for _, l := range ls {
		if l.fields[0] == "VIEW" && len(l.fields) == 5 {
			k := l.fields[2] + "/" + l.fields[3] + "/" + l.fields[4]
			if _, ok := views[k]; !ok {
				views[k] = l.at
			}
		}
	}
	floor := fmt.Sprintf("delete→watch p50 %s", ms(f.notify.P50))
	var out []Result
	for _, class := range routingClasses {
		w := windows[class]
		var lags, elected []time.Duration
		unseen := 0
		for _, l := range ls {
			if l.fields[0] != "LEAD" || l.at < w[0] || l.at >= w[1] || len(l.fields) != 4 {
				continue
			}
			elected = append(elected, time.Duration(l.at-w[0])*time.Microsecond)
			if v, ok := views[l.fields[2]+"/"+l.who+"/"+l.fields[3]]; ok {
				lags = append(lags, time.Duration(max(v-l.at, 0))*time.Microsecond)
			} else {
				unseen++
			}
		}
		reqs, wrong, noLeader, gap := misroutes(ls, w)
		name := fmt.Sprintf("routing/%d shards/%s", r.shards, class)
		ld, ed := NewDist(lags), NewDist(elected)
		changes := len(lags) + unseen
		if c := costs[class]; c.ok && changes > 0 {
			out = append(out, Result{Scenario: name + " ensemble cost", Value: float64(c.sent) / float64(changes), Unit: "packets to the router per leader change",
				Note: fmt.Sprintf("servers' cons: %d packets sent the router (notifications, replies, pings), %d requests from it (pings included), %d leader changes; the router's session holds %d watch(es) (wchc), the ensemble %d (zk_watch_count); a notification of a candidate is %d bytes",
					c.sent, c.recved, changes, c.watches, c.allWatches, notificationBytes(r.root+"/buckets/123/"+strconv.Itoa(r.shards-1)+"/_c_0123456789abcdef01234567-0000000001"))})
		}
		out = append(out,
			Result{Scenario: name + " router lag", Dist: &ld, Floor: floor,
				Note: fmt.Sprintf("member's OnStartedLeading → router's view, %d leaderships (%d never shown, superseded)", len(lags)+unseen, unseen)},
			Result{Scenario: name + " election", Dist: &ed, Note: "command → each new leader's OnStartedLeading"},
			Result{Scenario: name + " misroutes", Value: perThousand(wrong, reqs), Unit: "per 1,000 requests",
				Note: fmt.Sprintf("%d requests: %d to a member not leading (or an older token), %d with no leader in view while one led >10ms, %d in a handoff's gap (no member led)", reqs, wrong, noLeader, gap)},
		)
	}
	return out
}

func perThousand(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) * 1000 / float64(of)
}

// misroutes checks each request of window w against the leader the
// members' reports give at its time: wrong counts those routed to another
// member or token, noLeader those that found no leader in view although a
// member had led the shard for at least the floor's 10 ms.
func misroutes(ls []stampedLine, w [2]int64) (reqs, wrong, noLeader, gap int) {
	type lead struct {
		who   string
		token string
		at    int64
	}
	led := map[string]lead{}
	sorted := append([]stampedLine(nil), ls...)
	sortByStamp(sorted)
	for _, l := range sorted {
		switch l.fields[0] {
		case "LEAD":
			if len(l.fields) == 4 {
				led[l.fields[2]] = lead{who: l.who, token: l.fields[3], at: l.at}
			}
		case "STOP":
			if led[l.fields[2]].who == l.who {
				delete(led, l.fields[2])
			}
		case "REQ":
			if l.at < w[0] || l.at >= w[1] || len(l.fields) != 6 {
				continue
			}
			reqs++
			truth, ok := led[l.fields[2]]
			switch l.fields[5] {
			case "ok":
				switch {
				case !ok:
					gap++ // no member leads: a handoff's gap, nobody to route to
				case truth.who != l.fields[3] || truth.token != l.fields[4]:
					wrong++
				}
			case "noleader", "stale":
				if ok && l.at-truth.at > 10_000 {
					noLeader++
				}
			}
		}
	}
	return reqs, wrong, noLeader, gap
}

// sortByStamp orders lines by their stamps (stable: a child's own order
// kept for equal stamps).
func sortByStamp(ls []stampedLine) {
	slices.SortStableFunc(ls, func(a, b stampedLine) int { return cmp.Compare(a.at, b.at) })
}
