package recipe_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// BenchmarkFailover measures, on a local 3-node ensemble:
//
//   - resign: from a leader's Resign to its successor's leadership;
//   - crash: from a leader's connection going silent (blackholed: a crash as
//     the ensemble sees it) to its successor's leadership;
//
// each beside its raw floor, measured in the same iterations (alternating,
// so both see the same machine load):
//
//   - for resign: from a Delete in one session to the exists-watch
//     notification in another;
//   - for crash: from the same silence of a session to the notification of
//     the deletion of its ephemeral znode (the server's expiry detection).
//
// Each reports p50 and p99 in milliseconds (floor-p50-ms, floor-p99-ms for
// the floor). Run with, for example:
//
//	go test -run '^$' -bench 'Failover/resign' -benchtime 300x ./recipe/
//	go test -run '^$' -bench 'Failover/crash' -benchtime 10x ./recipe/
func BenchmarkFailover(b *testing.B) {
	ens, err := testenv.Start(context.Background(), testenv.Options{Servers: 3})
	if err != nil {
		b.Fatal(err)
	}
	defer ens.Close()
	b.Run("resign", func(b *testing.B) {
		resign, floor := newResignBench(b, ens), newRawDeleteBench(b, ens)
		var ds, fs []time.Duration
		for b.Loop() {
			fs = append(fs, floor())
			ds = append(ds, resign())
		}
		report(b, "", ds)
		report(b, "floor-", fs)
	})
	b.Run("crash", func(b *testing.B) {
		crash, floor := newCrashBench(b, ens), newRawExpiryBench(b, ens)
		var ds, fs []time.Duration
		for b.Loop() {
			fs = append(fs, floor())
			ds = append(ds, crash())
		}
		report(b, "", ds)
		report(b, "floor-", fs)
		b.ReportMetric(1000, "session-timeout-ms")
	})
}

// report adds p50 and p99 of ds to the benchmark's output.
func report(b *testing.B, prefix string, ds []time.Duration) {
	slices.Sort(ds)
	q := func(p float64) float64 {
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), prefix+"p50-ms")
	b.ReportMetric(q(0.99), prefix+"p99-ms")
	b.ReportMetric(0, "ns/op")
}

// awaitWaiting waits until s's candidate watches a znode under path on its
// server (so it waits behind the leader, watch set); addrs are the addresses
// s connects to, in the ensemble's server order.
func awaitWaiting(b *testing.B, ens *testenv.Cluster, addrs []string, s *recipe.Session, path string) {
	b.Helper()
	eventually(b, "the candidate to watch its predecessor", func() bool {
		i := slices.Index(addrs, s.Conn().Server())
		if i < 0 || !s.Connected() {
			return false
		}
		out, err := ens.FourLetterWord(context.Background(), i, "wchc")
		if err != nil {
			return false
		}
		_, rest, ok := strings.Cut(out, fmt.Sprintf("0x%x\n", s.ID()))
		if !ok {
			return false
		}
		for _, l := range strings.Split(rest, "\n") {
			if !strings.HasPrefix(l, "\t") {
				return false
			}
			if strings.HasPrefix(strings.TrimSpace(l), path+"/") {
				return true
			}
		}
		return false
	})
}

// newResignBench sets up two candidates; each call makes the leader resign
// and returns the time until the other leads.
func newResignBench(b *testing.B, ens *testenv.Cluster) func() time.Duration {
	path := electionPath(b)
	ss := []*recipe.Session{session(b, ens.ConnectString()), session(b, ens.ConnectString())}
	cs := []*recipe.Candidate{candidate(b, ss[0], path), candidate(b, ss[1], path)}
	ctx := context.Background()
	l := lead(b, cs[0])
	cur := 0
	next := campaignAsync(ctx, cs[1])
	return func() time.Duration {
		awaitWaiting(b, ens, ens.Addrs(), ss[1-cur], path)
		start := time.Now()
		if err := l.Resign(ctx); err != nil {
			b.Fatal(err)
		}
		r := awaitResult(b, next, "the successor")
		if r.err != nil {
			b.Fatal(r.err)
		}
		next = campaignAsync(ctx, cs[cur])
		l, cur = r.lead, 1-cur
		return r.at.Sub(start)
	}
}

// newRawDeleteBench returns a function timing one delete → notification.
func newRawDeleteBench(b *testing.B, ens *testenv.Cluster) func() time.Duration {
	path := electionPath(b)
	a, w := rawConn(b, ens.ConnectString()), rawConn(b, ens.ConnectString())
	ensurePath(b, a, path)
	return func() time.Duration {
		p, err := a.Create(path+"/n", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Sync(p); err != nil {
			b.Fatal(err)
		}
		ok, _, ev, err := w.ExistsW(p)
		if err != nil || !ok {
			b.Fatalf("exists %s: %v %v", p, ok, err)
		}
		start := time.Now()
		if err := a.Delete(p, -1); err != nil {
			b.Fatal(err)
		}
		select {
		case <-ev:
		case <-time.After(wait):
			b.Fatal("no notification")
		}
		return time.Since(start)
	}
}

// newCrashBench sets up two candidates behind proxies; each call blackholes
// the leader and returns the time until the other leads.
func newCrashBench(b *testing.B, ens *testenv.Cluster) func() time.Duration {
	path := electionPath(b)
	ctx := context.Background()
	ps := []*testenv.Proxy{ens.NewProxyT(b), ens.NewProxyT(b)}
	ss := []*recipe.Session{
		session(b, ps[0].ConnectString(), recipe.WithSessionTimeout(time.Second)),
		session(b, ps[1].ConnectString(), recipe.WithSessionTimeout(time.Second)),
	}
	cs := []*recipe.Candidate{candidate(b, ss[0], path), candidate(b, ss[1], path)}
	lead(b, cs[0])
	cur := 0
	next := campaignAsync(ctx, cs[1])
	return func() time.Duration {
		awaitWaiting(b, ens, ps[1-cur].Addrs(), ss[1-cur], path)
		start := time.Now()
		ps[cur].Blackhole()
		r := awaitResult(b, next, "the successor")
		if r.err != nil {
			b.Fatal(r.err)
		}
		ps[cur].Heal()
		next = campaignAsync(ctx, cs[cur])
		cur = 1 - cur
		return r.at.Sub(start)
	}
}

// newRawExpiryBench returns a function timing one silence → notification
// of the deletion of the silent session's ephemeral znode.
func newRawExpiryBench(b *testing.B, ens *testenv.Cluster) func() time.Duration {
	path := electionPath(b)
	p := ens.NewProxyT(b)
	w := rawConn(b, ens.ConnectString())
	ensurePath(b, w, path)
	return func() time.Duration {
		a := dialRaw(b, p.ConnectString(), time.Second)
		defer a.Close()
		n, err := a.Create(path+"/n", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Sync(n); err != nil {
			b.Fatal(err)
		}
		ok, _, ev, err := w.ExistsW(n)
		if err != nil || !ok {
			b.Fatalf("exists %s: %v %v", n, ok, err)
		}
		start := time.Now()
		p.Blackhole()
		defer p.Heal()
		select {
		case <-ev:
		case <-time.After(wait):
			b.Fatal("no notification")
		}
		return time.Since(start)
	}
}

// dialRaw is rawConn with a given session timeout and no cleanup wait.
func dialRaw(b *testing.B, servers string, timeout time.Duration) *zk.Conn {
	conn, events, err := zk.Connect(strings.Split(servers, ","), timeout, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		for range events {
		}
	}()
	eventually(b, "a raw session", func() bool { return conn.State() == zk.StateHasSession })
	return conn
}
