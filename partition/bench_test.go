package partition_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// BenchmarkManager measures, on a local 3-node ensemble, for 1,000 and
// 10,000 shards: the raw floor (as many ephemeral sequential creates from
// one session, floorInFlight in flight), 3 members converging on balanced
// leadership from a cold start, a fourth member joining and leaving
// gracefully (time and moves), a member crashing (its connection
// blackholed until its session expires) and the goroutines and heap per
// shard. Run it once per size:
//
//	go test -run '^$' -bench BenchmarkManager -benchtime 1x ./partition
func BenchmarkManager(b *testing.B) {
	zk3 := testenv.New(b, testenv.Options{Servers: 3})
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("shards=%d", n), func(b *testing.B) {
			for range b.N {
				benchScenario(b, zk3, n)
			}
		})
	}
}

// benchSessionTimeout is the members' session timeout in the benchmark.
const benchSessionTimeout = 2 * time.Second

// benchInFlight is the members' MaxInFlight (PARTITION_BENCH_INFLIGHT, default the default).
var benchInFlight, _ = strconv.Atoi(os.Getenv("PARTITION_BENCH_INFLIGHT"))

// floorInFlight is how many creates the raw floor keeps in flight.
const floorInFlight = 64

func benchScenario(b *testing.B, c *testenv.Cluster, n int) {
	ctx := b.Context()
	benchRegistry = prometheus.NewRegistry()
	root := fmt.Sprintf("/bench/%d-%d", n, rootSeq.Add(1))
	shards := partition.Range(0, n)

	floor := rawFloor(b, benchSession(b, c.Addrs()), root+"-floor", n)

	proxy := c.NewProxyT(b)
	sessions := []*recipe.Session{benchSession(b, c.Addrs()), benchSession(b, c.Addrs()), benchSession(b, proxy.Addrs())}
	goroutines0, heap0 := runtimeUsage()
	var ms []*member
	led := make([]atomic.Int64, 4)
	start := time.Now()
	for i, sess := range sessions {
		ms = append(ms, benchMember(b, sess, root, fmt.Sprintf("m%d", i), shards, &led[i]))
	}
	allLed := waitFor(b, 5*time.Minute, "every shard led", func() (bool, string) {
		total := led[0].Load() + led[1].Load() + led[2].Load()
		return total == int64(n), fmt.Sprintf("%d/%d led", total, n)
	})
	b.ReportMetric(allLed.Seconds(), "all_led_s")
	before := waitCounts(b, root, shards, ms, led[:3])
	converge := time.Since(start)
	// The machine is shared: measure the floor again right after, and
	// compare with the mean of both.
	floor2 := rawFloor(b, benchSession(b, c.Addrs()), root+"-floor2", n)
	floor = (floor + floor2) / 2
	b.ReportMetric(floor.Seconds(), "floor_s")
	b.ReportMetric(converge.Seconds(), "converge_s")
	b.ReportMetric(converge.Seconds()/floor.Seconds(), "converge/floor")
	b.Logf("cold start: %v leaderships started, %v passed on before starting",
		counterSum(b, "zkelect_partition_leaderships_started_total"), counterSum(b, "zkelect_partition_passed_on_total"))
	goroutines1, heap1 := runtimeUsage()
	b.ReportMetric(float64(goroutines1-goroutines0)/float64(n), "goroutines/shard")
	b.ReportMetric(float64(heap1-heap0)/float64(n), "heapB/shard")

	start = time.Now()
	joiner := benchMember(b, benchSession(b, c.Addrs()), root, "m3", shards, &led[3])
	after := waitCounts(b, root, shards, append(ms, joiner), led)
	b.ReportMetric(time.Since(start).Seconds(), "join_s")
	b.ReportMetric(float64(moved(before, after)), "join_moves")
	b.ReportMetric(float64(n)/4, "join_ideal")

	start = time.Now()
	joiner.stop(b)
	b.Logf("graceful stop: Run returned after %v", time.Since(start))
	waitFor(b, 5*time.Minute, "the joiner's shards led again", func() (bool, string) {
		total := led[0].Load() + led[1].Load() + led[2].Load()
		return total == int64(n), fmt.Sprintf("%d/%d led", total, n)
	})
	b.ReportMetric(time.Since(start).Seconds(), "stop_recovery_s")
	left := leaders(b, ms)
	b.ReportMetric(float64(moved(after, left)), "leave_moves")

	crashed := ms[2]
	lost := len(crashed.m.Leaderships())
	start = time.Now()
	proxy.Blackhole()
	waitFor(b, 5*time.Minute, "the crashed member's shards led again", func() (bool, string) {
		total := led[0].Load() + led[1].Load()
		return total == int64(n), fmt.Sprintf("%d/%d led", total, n)
	})
	b.ReportMetric(time.Since(start).Seconds(), "crash_recovery_s")
	b.Logf("shards=%d: floor %v, converge %v; crash of a member leading %d shards (session timeout %v)",
		n, floor, converge, lost, benchSessionTimeout)
	proxy.Heal()
	for _, mb := range ms {
		mb.stop(b)
	}
	_ = ctx
}

// waitCounts waits until the members' leadership counters show every shard
// led and balanced (cheap to poll at 10,000 shards), then checks the
// members' Leaderships once and returns them.
func waitCounts(b *testing.B, root string, shards []string, ms []*member, led []atomic.Int64) map[string]string {
	ceil := int64((len(shards) + len(ms) - 1) / len(ms))
	_, desc, ok := tryWaitFor(time.Minute, func() (bool, string) {
		var total int64
		counts := make([]int64, len(led))
		ok := true
		for i := range led {
			counts[i] = led[i].Load()
			total += counts[i]
			ok = ok && counts[i] <= ceil
		}
		return ok && total == int64(len(shards)), fmt.Sprintf("counts %v", counts)
	})
	if !ok {
		diagnose(b, root, shards, ms)
		b.Fatalf("no balanced leadership after a minute: %s", desc)
	}
	lead, _ := waitBalanced(b, shards, ms, time.Minute)
	return lead
}

// diagnose logs the elections of a few shards nobody leads.
func diagnose(b *testing.B, root string, shards []string, ms []*member) {
	lead := leaders(b, ms)
	for _, mb := range ms {
		data, _, err := mb.sess.Conn().Get(root + "/owners/" + mb.id)
		b.Logf("member %s: session 0x%x, leads %d, record %d bytes (%v)", mb.id, mb.sess.ID(), len(mb.m.Leaderships()), len(data), err)
	}
	shown := 0
	for _, s := range shards {
		if _, ok := lead[s]; ok || shown >= 5 {
			continue
		}
		shown++
		ps, err := recipe.Participants(context.Background(), ms[0].sess, electionOf(b, ms[0].sess, root, s))
		b.Logf("shard %s: not led; participants %+v (%v)", s, ps, err)
		for _, mb := range ms {
			data, _, _ := mb.sess.Conn().Get(root + "/owners/" + mb.id)
			if strings.Contains(string(data), `"`+s+`"`) {
				b.Logf("  record of %s mentions it", mb.id)
			}
		}
	}
}

// benchRegistry collects the benchmark members' metrics (one scenario's).
var benchRegistry *prometheus.Registry

// counterSum sums a counter family of benchRegistry.
func counterSum(b *testing.B, name string) float64 { return counterValue(b, benchRegistry, name) }

// benchSession opens a session for the benchmark, closed at cleanup.
func benchSession(b *testing.B, addrs []string) *recipe.Session {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
	defer cancel()
	sess, err := recipe.Connect(ctx, addrs, recipe.WithSessionTimeout(benchSessionTimeout), recipe.WithLogger(zerolog.Nop()))
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	b.Cleanup(func() { _ = sess.Close() })
	return sess
}

// benchMember runs a Manager whose leaders do nothing but count
// themselves in led.
func benchMember(b *testing.B, sess *recipe.Session, root, id string, shards []string, led *atomic.Int64) *member {
	m, err := partition.NewManager(sess, root, partition.Config{
		MemberID: id, Shards: shards, Logger: zerolog.Nop(), Metrics: benchRegistry, MaxInFlight: benchInFlight,
		OnStartedLeading: func(context.Context, string, zxidfence.Token) { led.Add(1) },
		OnStoppedLeading: func(string, error) { led.Add(-1) },
	})
	if err != nil {
		b.Fatalf("NewManager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mb := &member{id: id, sess: sess, m: m, cancel: cancel, done: make(chan error, 1)}
	go func() { mb.done <- m.Run(ctx) }()
	b.Cleanup(func() { mb.stop(b) })
	return mb
}

// rawFloor times n ephemeral sequential creates under parent from one
// session with floorInFlight in flight: the least any election of n shards
// can cost.
func rawFloor(b *testing.B, sess *recipe.Session, parent string, n int) time.Duration {
	conn := sess.Conn()
	acl := zk.WorldACL(zk.PermAll)
	if _, err := conn.Create("/bench", nil, 0, acl); err != nil && err != zk.ErrNodeExists {
		b.Fatalf("create /bench: %v", err)
	}
	if _, err := conn.Create(parent, nil, 0, acl); err != nil {
		b.Fatalf("create %s: %v", parent, err)
	}
	sem := make(chan struct{}, floorInFlight)
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	start := time.Now()
	for range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := conn.Create(parent+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, acl); err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	if failed != nil {
		b.Fatalf("raw floor create: %v", failed)
	}
	return took
}

// runtimeUsage returns the goroutine count and live heap after a GC.
func runtimeUsage() (int, uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

// BenchmarkOneMember measures one member leading 10,000 shards on one
// session: time from Run to every shard led beside the raw floor, and
// goroutines and heap per shard.
//
//	go test -run '^$' -bench BenchmarkOneMember -benchtime 1x ./partition
func BenchmarkOneMember(b *testing.B) {
	zk3 := testenv.New(b, testenv.Options{Servers: 3})
	const n = 10000
	for range b.N {
		benchRegistry = prometheus.NewRegistry()
		root := fmt.Sprintf("/bench/one-%d", rootSeq.Add(1))
		floor := rawFloor(b, benchSession(b, zk3.Addrs()), root+"-floor", n)
		sess := benchSession(b, zk3.Addrs())
		goroutines0, heap0 := runtimeUsage()
		var led atomic.Int64
		mb := benchMember(b, sess, root, "solo", partition.Range(0, n), &led)
		took := waitFor(b, 5*time.Minute, "every shard led", func() (bool, string) {
			return led.Load() == n, fmt.Sprintf("%d/%d led", led.Load(), n)
		})
		goroutines1, heap1 := runtimeUsage()
		b.ReportMetric(floor.Seconds(), "floor_s")
		b.ReportMetric(took.Seconds(), "all_led_s")
		b.ReportMetric(took.Seconds()/floor.Seconds(), "all_led/floor")
		b.ReportMetric(float64(goroutines1-goroutines0)/n, "goroutines/shard")
		b.ReportMetric(float64(heap1-heap0)/n, "heapB/shard")
		stopStart := time.Now()
		mb.stop(b)
		b.ReportMetric(time.Since(stopStart).Seconds(), "stop_s")
	}
}
