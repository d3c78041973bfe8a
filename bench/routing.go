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
	state viewTally // kept as lines come, for settle
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
			timeout: cfg.routingSessionTimeout(n), ready: make(chan struct{}), procs: map[string]*routeProc{}}
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
			r.state.add(f, at)
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
	begin := time.Now()
	deadline, report := begin.Add(limit), begin.Add(30*time.Second)
	for {
		r.mu.Lock()
		led, last, lead := r.state.led, time.UnixMicro(r.state.lastAt), r.state.lastLead
		r.mu.Unlock()
		if led == r.shards && time.Since(last) > quiet && lead >= since {
			return nil
		}
		if time.Now().After(report) { // a long settle says how far it is
			r.e.logf("bench: routing %d shards: after %v the router's view shows %d led, the last change %v ago",
				r.shards, time.Since(begin).Round(time.Second), led, time.Since(last).Round(time.Millisecond))
			report = time.Now().Add(30 * time.Second)
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

// viewTally is what settle asks of the lines so far, kept line by line
// (walking every line each poll cost the bench a core at 100,000 shards).
type viewTally struct {
	view     map[string]bool // shard → the router's view shows a leader
	led      int             // shards the view shows led
	lastAt   int64           // µs: the last line of a leadership or of the view
	lastLead int64           // µs: the last leadership a member reported; -1: none
}

// add takes one line's fields, stamped at (µs).
func (t *viewTally) add(f []string, at int64) {
	if t.view == nil {
		t.view, t.lastLead = map[string]bool{}, -1
	}
	switch f[0] {
	case "VIEW":
		if len(f) < 4 {
			return
		}
		was, now := t.view[f[2]], f[3] != "-"
		t.view[f[2]] = now
		switch {
		case now && !was:
			t.led++
		case was && !now:
			t.led--
		}
	case "LEAD":
		t.lastLead = max(t.lastLead, at)
	case "STOP":
	default:
		return
	}
	t.lastAt = max(t.lastAt, at)
}

func (r *routeRun) run(ctx context.Context, cfg Config, f *floors) ([]Result, error) {
	begin := time.Now()
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
	cold := Result{Scenario: fmt.Sprintf("routing/%d shards/cold start", r.shards), Value: time.Since(begin).Seconds(), Unit: "s",
		Note: fmt.Sprintf("3 members and the router started together → the router's view shows every shard led, then quiet for 2 s (included); sessions %v", r.timeout)}
	r.e.logf("bench: routing %d shards: cold start settled in %.1f s", r.shards, cold.Value)
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
	return append([]Result{cold}, r.results(windows, costs, f)...), nil
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
		t := misroutes(ls, w, goneIn(class), views)
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
			Result{Scenario: name + " misroutes", Value: perThousand(t.wrong, t.reqs), Unit: "per 1,000 requests",
				Note: fmt.Sprintf("%d requests: %d to a member not leading (or an older token), %d in a handoff's gap%s (no live leader), %s",
					t.reqs, t.wrong, t.gap, gapWord(class), t.noLeaderNote(goneIn(class)))},
		)
	}
	return out
}

// goneIn is the member the event of class kills or stops ("": none).
func goneIn(class string) string {
	switch class {
	case "crash", "restart within grace":
		return "m2"
	case "resume after expiry":
		return "m3"
	}
	return ""
}

// goneWordOr names the gone member, "gone" when none.
func goneWordOr(gone string) string {
	if gone == "" {
		return "gone"
	}
	return gone
}

// gapWord adds to a gap count, for a class that kills or stops a member,
// that requests routed to it before its session expired count there.
func gapWord(class string) string {
	switch goneIn(class) {
	case "":
		return ""
	case "m3":
		return " or to the stopped m3 before its session expired"
	}
	return " or to the killed m2 before its session expired"
}

// noLeaderNote describes the requests that found no leader in view.
func (t reqTally) noLeaderNote(gone string) string {
	s := fmt.Sprintf("%d with no leader in view after the new leader led >10ms", t.noLeader)
	if t.noLeader > 0 {
		a, f := NewDist(t.viewAfter), NewDist(t.ledFor)
		s += fmt.Sprintf(" (it had led %s / %s p50 / max; the view showed it %s / %s after the request, %d never)",
			ms(f.P50), ms(f.Max), ms(a.P50), ms(a.Max), t.noLeader-len(t.viewAfter))
	}
	if gone != "" {
		s += fmt.Sprintf(", %d with no leader in view while %s's shard awaited its new leader (its session expiring or expired, no one elected yet)", t.goneNoLeader, gone)
	}
	if len(t.waits) > 0 {
		d := NewDist(t.waits)
		s += fmt.Sprintf("; %d found no leader at first and waited (WaitRoute, at most %v): %d then found one, waits p50 %s / max %s; when they began, %d had a new leader leading >10ms (the view's lag), %d one leading <10ms, %d awaited the %s member's successor, %d were in a handoff's gap",
			len(t.waits), routeWait, t.waitedOK, ms(d.P50), ms(d.Max), t.atFirst[0], t.atFirst[1], t.atFirst[2], goneWordOr(gone), t.atFirst[3])
	}
	return s
}

func perThousand(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) * 1000 / float64(of)
}

// reqTally is how a window's requests fared against the members' reports.
type reqTally struct {
	reqs, wrong, gap int
	// noLeader: requests that found no leader in view although a
	// leadership begun in the window had led the shard for over 10 ms (the
	// target: 0). viewAfter: how long after each such request the view
	// showed that leadership; ledFor: how long it had led by the request.
	noLeader          int
	viewAfter, ledFor []time.Duration
	// goneNoLeader: requests that found no leader in view while the
	// shard's last report was a leadership of the member the event killed
	// or stopped (which cannot report its end): its session was expiring
	// or had expired and no new leader had been elected yet. The count
	// before this distinction took these for "no leader in view while one
	// led".
	goneNoLeader int
	// waits: how long each request that found no leader in view at first
	// waited (routing.Client.WaitRoute, up to routeWait); waitedOK: how
	// many of them then found one.
	waits    []time.Duration
	waitedOK int
	// atFirst: what the requests that waited found when they began: [0] a
	// leadership begun over 10 ms before (the view's lag), [1] one begun
	// within 10 ms, [2] the gone member's shard awaiting its new leader,
	// [3] no member leading (a handoff's gap).
	atFirst [4]int
}

// waitedOf returns how long a REQ line's request waited for a leader (0:
// it found one at once, or the line is no REQ).
func waitedOf(l stampedLine) time.Duration {
	if l.fields[0] != "REQ" || len(l.fields) != 7 {
		return 0
	}
	w, err := strconv.ParseInt(l.fields[6], 10, 64)
	if err != nil || w <= 0 {
		return 0
	}
	return time.Duration(w) * time.Microsecond
}

// misroutes checks each request of window w against the leader the
// members' reports give at its time: wrong counts those routed to another
// member or token, noLeader those that found no leader in view although a
// member had led the shard for at least the floor's 10 ms. gone is the
// member the window's event killed or stopped ("" for none): its
// leaderships end at the window's start in the truth, since it reports no
// OnStoppedLeading (kill -9) or only once resumed. views gives when the
// view first showed each shard/member/token.
func misroutes(ls []stampedLine, w [2]int64, gone string, views map[string]int64) reqTally {
	type lead struct {
		who   string
		token string
		at    int64
	}
	led := map[string]lead{}
	goneLed := map[string]bool{} // shards whose last report is gone's leadership cut at w[0]
	sorted := append([]stampedLine(nil), ls...)
	for _, l := range ls { // a request that waited: where it began, to tell what it found then
		if w := waitedOf(l); w > 0 {
			sorted = append(sorted, stampedLine{who: l.who, at: l.at - w.Microseconds(), fields: []string{"REQ0", "", l.fields[2]}})
		}
	}
	sortByStamp(sorted)
	cut := false
	var t reqTally
	for _, l := range sorted {
		if !cut && l.at >= w[0] {
			cut = true
			for s, ld := range led {
				if gone != "" && ld.who == gone {
					delete(led, s)
					goneLed[s] = true
				}
			}
		}
		switch l.fields[0] {
		case "LEAD":
			if len(l.fields) == 4 {
				led[l.fields[2]] = lead{who: l.who, token: l.fields[3], at: l.at}
				delete(goneLed, l.fields[2])
			}
		case "STOP":
			if led[l.fields[2]].who == l.who {
				delete(led, l.fields[2])
			}
		case "REQ0": // a request that found no leader at first (and waited)
			if l.at < w[0] || l.at >= w[1] {
				continue
			}
			truth, ok := led[l.fields[2]]
			switch {
			case ok && l.at-truth.at > 10_000:
				t.atFirst[0]++
			case ok:
				t.atFirst[1]++
			case goneLed[l.fields[2]]:
				t.atFirst[2]++
			default:
				t.atFirst[3]++
			}
		case "REQ":
			if l.at < w[0] || l.at >= w[1] || len(l.fields) < 6 {
				continue
			}
			t.reqs++
			if w := waitedOf(l); w > 0 {
				t.waits = append(t.waits, w)
				if l.fields[5] == "ok" {
					t.waitedOK++
				}
			}
			truth, ok := led[l.fields[2]]
			switch l.fields[5] {
			case "ok":
				switch {
				case !ok:
					t.gap++ // no member leads: a handoff's gap, or the gone member's
				case truth.who != l.fields[3] || truth.token != l.fields[4]:
					t.wrong++
				}
			case "noleader", "stale":
				switch {
				case ok && l.at-truth.at > 10_000:
					t.noLeader++
					t.ledFor = append(t.ledFor, time.Duration(l.at-truth.at)*time.Microsecond)
					if v, shown := views[l.fields[2]+"/"+truth.who+"/"+truth.token]; shown {
						t.viewAfter = append(t.viewAfter, time.Duration(v-l.at)*time.Microsecond)
					}
				case !ok && goneLed[l.fields[2]]:
					t.goneNoLeader++
				}
			}
		}
	}
	return t
}

// sortByStamp orders lines by their stamps (stable: a child's own order
// kept for equal stamps).
func sortByStamp(ls []stampedLine) {
	slices.SortStableFunc(ls, func(a, b stampedLine) int { return cmp.Compare(a.at, b.at) })
}

// RoutingSessionTimeoutFor is the routing scenario's session timeout at n
// shards when Config.RoutingSessionTimeout is zero: base (the run's
// Config.SessionTimeout, 1 s by default) up to 10,000 shards, above that
// 1 s per 10,000 shards (10 s at 100,000), at most 20 s. A cold start of
// 100,000 shards keeps three member processes, the router and the three
// servers busy on two cores for tens of seconds, longer than a 1 s
// session survives a starved client.
func RoutingSessionTimeoutFor(n int, base time.Duration) time.Duration {
	if n <= 10000 {
		return base
	}
	return min(max(base, time.Duration(n/10000)*time.Second), 20*time.Second)
}

// routingSessionTimeout is the routing scenario's session timeout at n
// shards.
func (c Config) routingSessionTimeout(n int) time.Duration {
	if c.RoutingSessionTimeout > 0 {
		return c.RoutingSessionTimeout
	}
	return RoutingSessionTimeoutFor(n, c.SessionTimeout)
}

// maxSessionTimeout is the ensemble's maximum session timeout: 0
// (ZooKeeper's 20 ticks) unless the routing scenario asks for more.
func (c Config) maxSessionTimeout() time.Duration {
	if !slices.Contains(c.Scenarios, ScenarioRouting) {
		return 0
	}
	var longest time.Duration
	for _, n := range c.RoutingShards {
		longest = max(longest, c.routingSessionTimeout(n))
	}
	if longest <= 20*c.TickTime {
		return 0
	}
	return longest.Round(time.Millisecond)
}
