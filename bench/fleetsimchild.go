package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// The fleet simulation's real member (ScenarioFleetSim): one
// partition.Manager in its own process, so that its CPU, heap and bytes
// read are its own, not the driver's. It answers each line of its input:
//
//	stat  →  STAT <cpu µs> <bytes read> <assignments> <led> <assigned> <sessions>
//	heap  →  HEAP live <live heap bytes, after a collection>
//	exit (or the end of input) → the member stops gracefully and exits
//
// cpu is the process's user+system time (getrusage), bytes read what its
// sessions' connections read from ZooKeeper, assignments the Manager's
// zkelect_partition_assignments_total (its steps that computed an
// assignment), led the shards it leads, assigned its share
// (Manager.Assigned, -1 before the first assignment). The member sets
// OnLeaderChanged (a callback that does nothing), as a member that routes
// requests does.

// fleetMemberArg runs the fleet simulation's real member (RunChild).
const fleetMemberArg = "__zkelect-bench-fleet-member"

// runFleetMember is the real member: [servers, root, shards, timeout ms,
// id, shard id format].
func runFleetMember(args []string, in io.Reader, out io.Writer) error {
	if len(args) != 6 {
		return errors.New("want servers, root, shard count, session timeout in ms, id and shard id format")
	}
	n, err1 := strconv.Atoi(args[2])
	ms, err2 := strconv.Atoi(args[3])
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	servers, root, shards, timeout := strings.Split(args[0], ","), args[1], shardIDs(args[5], n), time.Duration(ms)*time.Millisecond
	stopProfile, err := profileCPU(os.Getenv(fleetJoinProfileEnv))
	if err != nil {
		return err
	}
	defer func() { stopProfile() }()
	stopTrace, err := traceTo(os.Getenv(fleetJoinTraceEnv))
	if err != nil {
		return err
	}
	defer func() { stopTrace() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var read atomic.Int64
	sess, err := recipe.Connect(ctx, servers, recipe.WithSessionTimeout(timeout), recipe.WithDialer(countingDialer(&read)))
	if err != nil {
		return err
	}
	defer sess.Close()
	var led atomic.Int64
	reg := prometheus.NewRegistry()
	mgr, err := partition.NewManager(sess, root, partition.Config{
		MemberID: args[4], Shards: shards, Metrics: reg,
		OnStartedLeading: func(context.Context, string, zxidfence.Token) { led.Add(1) },
		OnStoppedLeading: func(string, error) { led.Add(-1) },
		// A router inside the member, as OnLeaderChanged's users run:
		// the cost of following every shard's leader is the member's.
		OnLeaderChanged: func(string, string, zxidfence.Token) {},
	})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	w := bufio.NewWriter(out)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		switch sc.Text() {
		case "stat":
			assigned, ok := mgr.Assigned()
			if !ok {
				assigned = -1
			}
			fmt.Fprintf(w, "STAT %d %d %d %d %d %d\n", cpuMicros(), read.Load(), counterValue(reg, "zkelect_partition_assignments_total"),
				led.Load(), assigned, len(mgr.Sessions()))
		case "heap":
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if err := writeHeapProfile(os.Getenv(fleetHeapProfileEnv)); err != nil {
				return err
			}
			fmt.Fprintf(w, "HEAP live %d\n", ms.HeapAlloc)
		case "prof": // from the steady state on, when fleetProfileEnv names a file
			stopTrace()
			stopTrace = func() {}
			stopProfile()
			if stopProfile, err = profileCPU(os.Getenv(fleetProfileEnv)); err != nil {
				return err
			}
		case "exit":
			cancel()
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			break
		}
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// fleetProfileEnv names a file the real member writes its CPU profile
// to, from the command "prof" (sent once it leads its share) to its exit
// (unset: none).
const fleetProfileEnv = "ZKELECT_FLEETSIM_CPUPROFILE"

// fleetJoinProfileEnv names a file the real member writes its CPU
// profile to from its start to "prof": its join (unset: none).
const fleetJoinProfileEnv = "ZKELECT_FLEETSIM_JOIN_CPUPROFILE"

// fleetJoinTraceEnv names a file the real member writes an execution
// trace (runtime/trace) to from its start to "prof": where its join
// waits (unset: none).
const fleetJoinTraceEnv = "ZKELECT_FLEETSIM_JOIN_TRACE"

// fleetHeapProfileEnv names a file the real member writes its heap
// profile to at "heap", after the collection (unset: none).
const fleetHeapProfileEnv = "ZKELECT_FLEETSIM_HEAPPROFILE"

// traceTo starts an execution trace written to file ("": none) and
// returns what stops it.
func traceTo(file string) (func(), error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { trace.Stop(); f.Close() }, nil
}

// writeHeapProfile writes the heap profile to file ("": none).
func writeHeapProfile(file string) error {
	if file == "" {
		return nil
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// profileCPU starts a CPU profile written to file ("": none) and returns
// what stops it.
func profileCPU(file string) (func(), error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// cpuMicros returns this process's user and system CPU time in µs.
func cpuMicros() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano()/1e3 + ru.Stime.Nano()/1e3
}

// counterValue returns the sum of counter name in reg (0 if absent).
func counterValue(reg *prometheus.Registry, name string) int64 {
	mfs, err := reg.Gather()
	if err != nil {
		return 0
	}
	var v float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			v += m.GetCounter().GetValue()
		}
	}
	return int64(v)
}

// countingDialer dials TCP and adds every byte read on the connections it
// makes to n.
func countingDialer(n *atomic.Int64) func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, n: n}, nil
	}
}

// countingConn counts the bytes read from its connection.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	k, err := c.Conn.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// fleetStat is one STAT answer of the real member, read at at.
type fleetStat struct {
	at                   time.Time
	cpu, read, steps     int64
	led, assigned, sessn int64
}

// fleetProc is the real member's process, asked by one goroutine.
type fleetProc struct {
	p    *peerProc
	logf func(format string, args ...any)
}

// ask sends cmd and returns the fields of the next line, which must start
// with want.
func (m *fleetProc) ask(ctx context.Context, cmd, want string) ([]string, time.Time, error) {
	if err := m.p.send(cmd); err != nil {
		return nil, time.Time{}, err
	}
	t := time.NewTimer(time.Minute)
	defer t.Stop()
	for {
		select {
		case l, ok := <-m.p.lines:
			if !ok {
				return nil, time.Time{}, fmt.Errorf("bench: the fleet member exited: %s", m.p.stderr)
			}
			if f := strings.Fields(l.text); len(f) > 0 && f[0] == want {
				return f[1:], l.at, nil
			}
		case <-t.C:
			return nil, time.Time{}, fmt.Errorf("bench: no %s answer from the fleet member in a minute", want)
		case <-ctx.Done():
			return nil, time.Time{}, ctx.Err()
		}
	}
}

// stat asks for the member's counters.
func (m *fleetProc) stat(ctx context.Context) (fleetStat, error) {
	f, at, err := m.ask(ctx, "stat", "STAT")
	if err != nil {
		return fleetStat{}, err
	}
	if len(f) != 6 {
		return fleetStat{}, fmt.Errorf("bench: fleet member said STAT %v", f)
	}
	v := make([]int64, len(f))
	for i, s := range f {
		if v[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return fleetStat{}, fmt.Errorf("bench: fleet member said STAT %v: %w", f, err)
		}
	}
	return fleetStat{at: at, cpu: v[0], read: v[1], steps: v[2], led: v[3], assigned: v[4], sessn: v[5]}, nil
}

// heap asks for the member's live heap after a collection.
func (m *fleetProc) heap(ctx context.Context) (int64, error) {
	f, _, err := m.ask(ctx, "heap", "HEAP")
	if err != nil {
		return 0, err
	}
	if len(f) != 2 || f[0] != "live" {
		return 0, fmt.Errorf("bench: fleet member said HEAP %v", f)
	}
	return strconv.ParseInt(f[1], 10, 64)
}

// awaitShare polls the member every 100 ms until done holds, at most
// limit, and returns the first reading for which it did; each (when not
// nil) runs before each reading.
func (m *fleetProc) awaitShare(ctx context.Context, done func(fleetStat) bool, each func() error, limit time.Duration) (fleetStat, error) {
	deadline, report := time.Now().Add(limit), time.Now().Add(10*time.Second)
	for {
		if each != nil {
			if err := each(); err != nil {
				return fleetStat{}, err
			}
		}
		st, err := m.stat(ctx)
		if err != nil {
			return fleetStat{}, err
		}
		if done(st) {
			return st, nil
		}
		if time.Now().After(deadline) {
			return fleetStat{}, fmt.Errorf("bench: after %s the fleet member leads %d shards, assigned %d", limit, st.led, st.assigned)
		}
		if time.Now().After(report) {
			m.logf("bench: fleetsim: waiting: the member leads %d shards, assigned %d, %d steps", st.led, st.assigned, st.steps)
			report = time.Now().Add(10 * time.Second)
		}
		select {
		case <-ctx.Done():
			return fleetStat{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop asks the member to stop gracefully and kills it if it has not
// exited within a minute.
func (m *fleetProc) stop(ctx context.Context) {
	_ = m.p.send("exit")
	go func() {
		for range m.p.lines { // drain, so the reader reaches the process's exit
		}
	}()
	if err := m.p.awaitExit(ctx); err != nil {
		m.p.kill()
	}
}
