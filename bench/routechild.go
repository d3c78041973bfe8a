package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/routing"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// The routing scenario's child processes: a partition member and a router,
// each its own process, reporting on stdout with their own wall-clock
// stamps (microseconds since the Unix epoch; one machine, one clock):
//
//	member: LEAD <µs> <shard> <token>   OnStartedLeading ran
//	        STOP <µs> <shard>           OnStoppedLeading ran
//	router: VIEW <µs> <shard> <member> <token>   the view changed ("-" 0: no leader)
//	        REQ <µs> <shard> <member> <token> <ok|noleader|stale> <µs waited>
//	                                     answered (Client.WaitRoute, up to routeWait)
//	        READY                        the first view arrived
//	        SESS <µs> <session id>       the router's session (decimal)

const (
	// routeMemberArg runs a member of the routing scenario (RunChild).
	routeMemberArg = "__zkelect-bench-route-member"
	// routerArg runs the router of the routing scenario (RunChild).
	routerArg = "__zkelect-bench-router"
)

// runRouteChild runs one of the routing scenario's children when args ask
// for it.
func runRouteChild(args []string) (int, bool) {
	if len(args) < 2 || args[1] != routeMemberArg && args[1] != routerArg {
		return 0, false
	}
	var err error
	if args[1] == routeMemberArg {
		err = runRouteMember(args[2:], os.Stdin, os.Stdout)
	} else {
		err = runRouter(args[2:], os.Stdin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkelect bench routing child:", err)
		return 1, true
	}
	return 0, true
}

// stamp is now in microseconds since the Unix epoch.
func stamp() int64 { return time.Now().UnixMicro() }

// lineWriter writes whole lines from many goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lineWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", args...)
	l.w.Flush()
}

// childArgs parses [servers, root, shards, session timeout ms, extra].
func childArgs(args []string) (servers []string, root string, shards []string, timeout time.Duration, err error) {
	if len(args) < 5 {
		return nil, "", nil, 0, errors.New("want servers, root, shard count, session timeout in ms and one more")
	}
	n, err1 := strconv.Atoi(args[2])
	ms, err2 := strconv.Atoi(args[3])
	if err := errors.Join(err1, err2); err != nil {
		return nil, "", nil, 0, err
	}
	return strings.Split(args[0], ","), args[1], partition.Range(0, n), time.Duration(ms) * time.Millisecond, nil
}

// runRouteMember is a member: [servers, root, shards, timeout ms, id]. It
// runs until its input ends or says "exit".
func runRouteMember(args []string, in io.Reader, out io.Writer) error {
	servers, root, shards, timeout, err := childArgs(args)
	if err != nil {
		return err
	}
	id := args[4]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, err := recipe.Connect(ctx, servers, recipe.WithSessionTimeout(timeout))
	if err != nil {
		return err
	}
	defer sess.Close()
	lw := &lineWriter{w: bufio.NewWriter(out)}
	mgr, err := partition.NewManager(sess, root, partition.Config{
		MemberID: id, Shards: shards, Address: id + ".bench:8080",
		OnStartedLeading: func(ctx context.Context, shard string, token zxidfence.Token) {
			lw.printf("LEAD %d %s %d", stamp(), shard, uint64(token))
		},
		OnStoppedLeading: func(shard string, _ error) { lw.printf("STOP %d %s", stamp(), shard) },
	})
	if err != nil {
		return err
	}
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() && sc.Text() != "exit" {
		}
		cancel()
	}()
	if err := mgr.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// runRouter is the router: [servers, root, shards, timeout ms, requests
// per second]. It runs until its input ends or says "exit".
func runRouter(args []string, in io.Reader, out io.Writer) error {
	servers, root, shards, timeout, err := childArgs(args)
	if err != nil {
		return err
	}
	rate, err := strconv.Atoi(args[4])
	if err != nil || rate <= 0 {
		return fmt.Errorf("requests per second %q: want > 0", args[4])
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, err := recipe.Connect(ctx, servers, recipe.WithSessionTimeout(timeout))
	if err != nil {
		return err
	}
	defer sess.Close()
	c, err := routing.New(routing.Config{Source: routing.ZooKeeper(sess, root), Shards: shards})
	if err != nil {
		return err
	}
	lw := &lineWriter{w: bufio.NewWriter(out)}
	lw.printf("SESS %d %d", stamp(), sess.ID())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Add(3)
	go func() { defer wg.Done(); _ = c.Run(ctx) }()
	go func() { defer wg.Done(); reportViews(ctx, c, lw) }()
	go func() { defer wg.Done(); request(ctx, c, lw, rate, shards) }()
	sc := bufio.NewScanner(in)
	for sc.Scan() && sc.Text() != "exit" {
	}
	return nil
}

// reportViews prints every change of the view: each route of the first
// view, then each shard whose route a later change listed
// (Client.Changes, read with Leader: no copy of the routes, so a change
// costs the router in proportion to its shards at 100,000 shards too).
func reportViews(ctx context.Context, c *routing.Client, lw *lineWriter) {
	var last map[string]routing.Route
	for changed := range c.Changes(ctx) {
		now := stamp()
		if last == nil {
			lw.printf("READY")
			last = map[string]routing.Route{}
		}
		for _, s := range changed {
			r, err := c.Leader(s)
			led := r.Member != "" && (err == nil || errors.Is(err, routing.ErrStale))
			o, had := last[s]
			switch {
			case led && (!had || o.Member != r.Member || o.Token != r.Token):
				lw.printf("VIEW %d %s %s %d", now, s, r.Member, uint64(r.Token))
				last[s] = r
			case !led && had:
				lw.printf("VIEW %d %s - 0", now, s)
				delete(last, s)
			}
		}
	}
}

// routeWait bounds the router's wait for a leader (routing.Client.WaitRoute)
// when a request's shard has none in view.
const routeWait = time.Second

// request routes a random key rate times a second, each waiting up to
// routeWait for its shard's leader as a router retrying on NotLeader
// would, and prints each answer with how long it waited.
func request(ctx context.Context, c *routing.Client, lw *lineWriter, rate int, shards []string) {
	t := time.NewTicker(time.Second / time.Duration(rate))
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		key := "key-" + strconv.Itoa(rand.IntN(1<<30))
		wg.Add(1)
		go func() {
			defer wg.Done()
			routeOne(ctx, c, lw, key)
		}()
	}
}

// routeOne routes key, waiting up to routeWait for a leader, and prints
// the answer.
func routeOne(ctx context.Context, c *routing.Client, lw *lineWriter, key string) {
	r, err := c.Route(key)
	var waited time.Duration
	switch {
	case errors.Is(err, routing.ErrNotReady):
		return
	case errors.Is(err, routing.ErrNoLeader):
		wctx, cancel := context.WithTimeout(ctx, routeWait)
		t0 := time.Now()
		r, err = c.WaitRoute(wctx, key)
		waited = max(time.Since(t0), time.Microsecond)
		cancel()
		if ctx.Err() != nil {
			return
		}
	}
	outcome := "ok"
	switch {
	case errors.Is(err, routing.ErrNoLeader):
		outcome = "noleader"
	case errors.Is(err, routing.ErrStale):
		outcome = "stale"
	}
	m := r.Member
	if m == "" {
		m = "-"
	}
	lw.printf("REQ %d %s %s %d %s %d", stamp(), r.Shard, m, uint64(r.Token), outcome, waited.Microseconds())
}
