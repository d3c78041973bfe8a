package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// logLine is one line of a daemon's JSON log, its fields but the time.
type logLine map[string]any

// jsonLog decodes a daemon's JSON log lines (others are skipped).
func jsonLog(s string) []logLine {
	var out []logLine
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			delete(l, "time")
			out = append(out, l)
		}
	}
	return out
}

// key is the line's fields in a stable order.
func (l logLine) key() string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%v ", k, l[k])
	}
	return b.String()
}

// TestShardsFirstStartWarnsNothing: a correct first start of `zkelect
// shards` on a fresh root logs no warning. It logged three `node does not
// exist` warnings: the daemon's follower of the root (for /v1/owners)
// listed members and owners before the member had created them.
func TestShardsFirstStartWarnsNothing(t *testing.T) {
	const n = 4
	s := testSession(t)
	root := testPath(t)
	d := startDaemonWith(t, root, "m1", n, nil)
	eventually(t, 30*time.Second, "m1 leading the 4 shards", func() bool { return leadCounts(owners(t, s, root))["m1"] == n })
	eventually(t, 10*time.Second, "/v1/owners to show m1 leading the 4 shards", func() bool {
		return ownersOf(t, d).Members["m1"] == n
	})
	for _, l := range jsonLog(d.err.String()) {
		if l["level"] == "warn" || l["level"] == "error" {
			t.Errorf("a first start logged %v", l)
		}
	}
}

// TestWatchErrorsTheCutCausedAreNotWarnings cuts a daemon off from
// ZooKeeper past its session timeout, so that its watches of the root
// fail, and heals the link. Those errors are the connection's, which the
// session logs itself (disconnected, expired): the watches log them at
// debug level, the daemon's follower of the root (for /v1/owners) naming
// itself. They were warnings, each logged twice word for word (by the
// member's watcher and by the follower).
func TestWatchErrorsTheCutCausedAreNotWarnings(t *testing.T) {
	const n = 2
	s := testSession(t)
	root := testPath(t)
	proxy := zkc.NewProxyT(t)
	d := startDaemonWith(t, root, "m1", n, []string{"--zk", proxy.ConnectString(), "--session-timeout", "2s", "--log-level", "debug"})
	eventually(t, 30*time.Second, "m1 leading the 2 shards", func() bool { return leadCounts(owners(t, s, root))["m1"] == n })
	before := len(d.err.String()) // the lines of the cut from here
	proxy.Blackhole()
	eventually(t, 30*time.Second, "a watch of the root failing while cut off", func() bool {
		return strings.Contains(d.err.String()[before:], `"message":"watch `)
	})
	proxy.Heal()
	eventually(t, 30*time.Second, "m1 leading the 2 shards again", func() bool { return leadCounts(owners(t, s, root))["m1"] == n })
	seen := map[string]int{}
	for _, l := range jsonLog(d.err.String()[before:]) {
		if msg, _ := l["message"].(string); !strings.HasPrefix(msg, "watch ") {
			continue
		}
		seen[l.key()]++
		if l["level"] != "debug" {
			t.Errorf("a watch error the cut caused logged at %v: %v", l["level"], l)
		}
	}
	t.Logf("watch lines: %v", seen)
}
