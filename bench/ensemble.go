package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// This file measures what a fleet costs the ensemble itself: each
// server's znode and watch counts (mntr), its JVM's live heap (jcmd, after
// a full collection) and resident memory (/proc); snapshot.go measures
// its snapshot.

// serverMemory is one server's figures.
type serverMemory struct {
	znodes, dataBytes, watches int64 // mntr zk_znode_count, zk_approximate_data_size, zk_watch_count
	heapUsed                   int64 // bytes of Java heap in use after a full GC; -1 if jcmd failed
	rss                        int64 // resident bytes of the JVM process; -1 if unreadable
}

// ensembleMemory returns one row per figure for a fleet of n shards: the
// largest over the servers (a follower holds the same tree as the leader).
func (e *env) ensembleMemory(ctx context.Context, n int) ([]Result, error) {
	var most serverMemory
	var each []string
	for i := range e.cluster.Size() {
		m, err := e.serverMemory(ctx, i)
		if err != nil {
			return nil, err
		}
		most = serverMemory{max(most.znodes, m.znodes), max(most.dataBytes, m.dataBytes), max(most.watches, m.watches),
			max(most.heapUsed, m.heapUsed), max(most.rss, m.rss)}
		each = append(each, fmt.Sprintf("server %d: %s heap, %s RSS", i, mib(m.heapUsed), mib(m.rss)))
	}
	per := func(v int64) string {
		if v < 0 || most.znodes == 0 {
			return "unknown"
		}
		return fmt.Sprintf("%.0f bytes a znode, %.0f a shard", float64(v)/float64(most.znodes), float64(v)/float64(n))
	}
	at := fmt.Sprintf("at %d", n)
	return []Result{
		{Scenario: "shards/znodes " + at, Value: float64(most.znodes), Unit: "znodes",
			Note: fmt.Sprintf("mntr zk_znode_count; %d watches (zk_watch_count), %s of data (zk_approximate_data_size)", most.watches, mib(most.dataBytes))},
		{Scenario: "shards/server JVM heap used " + at, Value: float64(most.heapUsed), Unit: "bytes",
			Note: fmt.Sprintf("jcmd GC.heap_info after GC.run, the largest server: %s; %s", per(most.heapUsed), strings.Join(each, "; "))},
		{Scenario: "shards/server RSS " + at, Value: float64(most.rss), Unit: "bytes",
			Note: fmt.Sprintf("VmRSS of the largest server's JVM (heap, metaspace, threads, buffers); %s", per(most.rss))},
	}, nil
}

// serverMemory reads server i's figures.
func (e *env) serverMemory(ctx context.Context, i int) (serverMemory, error) {
	var m serverMemory
	for _, f := range []struct {
		key string
		v   *int64
	}{{"zk_znode_count", &m.znodes}, {"zk_approximate_data_size", &m.dataBytes}, {"zk_watch_count", &m.watches}} {
		v, err := e.cluster.Mntr(ctx, i, f.key)
		if err != nil {
			return m, fmt.Errorf("bench: server %d: %w", i, err)
		}
		*f.v = v
	}
	pid := e.cluster.PID(i)
	m.heapUsed = jvmHeapUsed(ctx, pid, e.logf)
	m.rss = processRSS(pid)
	return m, nil
}

// heapUsedRE matches a generation's line of jcmd GC.heap_info, such as
// "def new generation   total 4928K, used 2412K [...]".
var heapUsedRE = regexp.MustCompile(`(?m)^\s*\S.*?\btotal \d+K, used (\d+)K`)

// jvmHeapUsed runs a full collection in the JVM pid (jcmd GC.run) and
// returns the heap it then uses, summed over its generations
// (GC.heap_info), in bytes; -1, logged, if jcmd fails.
func jvmHeapUsed(ctx context.Context, pid int, logf func(string, ...any)) int64 {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	p := strconv.Itoa(pid)
	if out, err := exec.CommandContext(ctx, "jcmd", p, "GC.run").CombinedOutput(); err != nil {
		logf("bench: jcmd %s GC.run: %v: %s", p, err, out)
		return -1
	}
	out, err := exec.CommandContext(ctx, "jcmd", p, "GC.heap_info").CombinedOutput()
	if err != nil {
		logf("bench: jcmd %s GC.heap_info: %v: %s", p, err, out)
		return -1
	}
	var used int64
	matches := heapUsedRE.FindAllSubmatch(out, -1)
	for _, m := range matches {
		k, _ := strconv.ParseInt(string(m[1]), 10, 64)
		used += k << 10
	}
	if len(matches) == 0 {
		logf("bench: jcmd %s GC.heap_info: no generation in %q", p, out)
		return -1
	}
	return used
}

// processRSS returns pid's resident set size in bytes (VmRSS), or -1.
func processRSS(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// mib renders bytes in MiB, or "unknown" for a negative count.
func mib(b int64) string {
	if b < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
