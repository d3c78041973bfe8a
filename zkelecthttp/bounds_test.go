package zkelecthttp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zkelecthttp"
	"github.com/zkelect/zkelect/zxidfence"
)

// These tests forge, as anyone holding a root's credentials (anyone, on
// an open root) could, member znodes and records under the root of a
// member of 8 shards that serves /v1/owners: the member's two readers of
// the root (its loop's and Shards.Run's) stay within their bounds
// (partition/README.md, "Bounds").

// logBuffer keeps a member's log lines for counting.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// count returns how many lines hold s.
func (b *logBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// boundedMember starts member m1 of root over shards "0".."7", logging to
// logs and registering its metrics on reg, and waits until /v1/owners
// shows it leading all 8.
func boundedMember(t *testing.T, root string, logs *logBuffer, reg *prometheus.Registry) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	sess, err := recipe.Connect(ctx, zkc.Addrs(), recipe.WithSessionTimeout(4*time.Second),
		recipe.WithLogger(zerolog.New(logs).Level(zerolog.WarnLevel)))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	shards := partition.Range(0, 8)
	mgr := runManager(t, sess, root, partition.Config{
		MemberID: "m1", Shards: shards, Metrics: reg,
		OnStartedLeading: func(ctx context.Context, _ string, _ zxidfence.Token) { <-ctx.Done() },
	})
	api, err := zkelecthttp.NewShards(sess, mgr, zkelecthttp.ShardsOptions{Root: root, Member: "m1", Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Register(mux)
	runShards(t, api)
	url := serve(t, mux)
	eventually(t, 30*time.Second, "/v1/owners to show m1 leading the 8 shards", func() bool {
		return ledBy(ownersOf(t, url), "m1")
	})
	return url
}

// ownersOf returns the shards /v1/owners at url lists, each with its
// leader ("" for none), or nil before it answers.
func ownersOf(t *testing.T, url string) map[string]string {
	t.Helper()
	code, body := get(t, url+"/v1/owners")
	if code != http.StatusOK {
		return nil
	}
	var o zkelecthttp.Owners
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatalf("/v1/owners: %v", err)
	}
	out := make(map[string]string, len(o.Shards))
	for _, s := range o.Shards {
		out[s.Shard] = s.Leader
	}
	return out
}

// ledBy reports whether owners lists the shards "0".."7", each led by
// member ("" for any member but those forged, named evil...).
func ledBy(owners map[string]string, member string) bool {
	if len(owners) != 8 {
		return false
	}
	for i := range 8 {
		l, ok := owners[strconv.Itoa(i)]
		if !ok || (member != "" && l != member) || strings.HasPrefix(l, "evil") {
			return false
		}
	}
	return true
}

// gzipOf returns data gzipped.
func gzipOf(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// heap returns the live heap after a collection, and the bytes allocated
// so far.
func heap() (live, total uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.TotalAlloc
}

// TestForgedRecordsCostTheMemberNoMemory writes, beside a member of 8
// shards, two forged live members: one whose record is 61 KB of gzip
// decompressing to 60 MiB, one whose record claims 300,000 shards. Both
// readers refuse both records (their bound at 8 shards is 157,472 bytes
// decompressed), so the process's live heap grows by less than 16 MiB and
// it allocates less than 64 MiB meanwhile; /v1/owners still lists the 8
// shards, none led by the forged members (their records are refused: they
// claim nothing). The old readers decompressed 60 MiB each, kept it,
// and listed the 300,000 shards.
func TestForgedRecordsCostTheMemberNoMemory(t *testing.T) {
	root, logs, reg := testPath(t), &logBuffer{}, prometheus.NewRegistry()
	url := boundedMember(t, root, logs, reg)
	forger := connect(t, zkc.Addrs())
	head := []byte(`{"session":` + strconv.FormatInt(forger.ID(), 10))
	bomb := gzipOf(t, append(append(append(head, `,"leading":{"0":1},"address":"`...), bytes.Repeat([]byte("A"), 60<<20)...), `"}`...))
	claims := append(head, `,"leading":{"0":1`...)
	for i := 1; i < 300_000; i++ {
		claims = append(append(append(claims, ',', '"'), strconv.Itoa(i)...), `":1`...)
	}
	many := gzipOf(t, append(claims, "}}"...))
	claims = nil
	t.Logf("forged records: %d bytes of gzip (60 MiB decompressed), %d bytes of gzip (300,000 claims)", len(bomb), len(many))

	live0, total0 := heap()
	open := zk.WorldACL(zk.PermAll)
	for _, z := range []struct {
		p     string
		data  []byte
		flags int32
	}{
		{root + "/members/evil", nil, zk.FlagEphemeral}, {root + "/members/evil2", nil, zk.FlagEphemeral},
		{root + "/owners/evil", bomb, 0}, {root + "/owners/evil2", many, 0},
	} {
		if _, err := forger.Conn().Create(z.p, z.data, z.flags, open); err != nil {
			t.Fatalf("create %s: %v", z.p, err)
		}
	}
	eventually(t, 60*time.Second, "both readers to refuse both records (or /v1/owners to list the forged claims)", func() bool {
		return logs.count("ignoring unreadable member record") >= 4 || len(ownersOf(t, url)) > 8
	})
	live, total := heap()
	t.Logf("live heap %d -> %d bytes, %d bytes allocated meanwhile", live0, live, total-total0)
	if grew := int64(live) - int64(live0); grew > 16<<20 {
		t.Errorf("the live heap grew by %d bytes reading the forged records, want under 16 MiB", grew)
	}
	if n := total - total0; n > 64<<20 {
		t.Errorf("reading the forged records allocated %d bytes, want under 64 MiB", n)
	}
	if o := ownersOf(t, url); !ledBy(o, "") {
		if len(o) > 20 {
			o = map[string]string{"(shards listed)": strconv.Itoa(len(o))}
		}
		t.Errorf("/v1/owners lists %v, want the 8 shards and none led by the forged members", o)
	}
}

// gaugeOf returns the value of the gauge name{label="value"} in reg, -1
// when absent.
func gaugeOf(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

// createAll creates the znodes at paths with data and flags, 200 to a
// multi.
func createAll(t *testing.T, conn *zk.Conn, paths []string, data func(string) []byte, flags int32) {
	t.Helper()
	for len(paths) > 0 {
		n := min(len(paths), 200)
		ops := make([]any, 0, n)
		for _, p := range paths[:n] {
			ops = append(ops, &zk.CreateRequest{Path: p, Data: data(p), Acl: zk.WorldACL(zk.PermAll), Flags: flags})
		}
		if _, err := conn.Multi(ops...); err != nil {
			t.Fatalf("create %d znodes from %s: %v", n, paths[0], err)
		}
		paths = paths[n:]
	}
}

// TestForeignMembersAndRecordsAreBounded forges, beside a member of 8
// shards, 2,000 persistent znodes under members (before it starts), then
// 2,000 live members with a record each. Each of its two readers counts
// 256 members and watches 256 records (its bound at 8 shards: the oldest
// members, its own first), reports the others on
// zkelect_partition_root_refused, and logs each kind in one line: the
// process's goroutines grow by at most 2 readers x 256 records + 200.
// The old readers ran a watcher per record (34 to 4,053 goroutines in a
// daemon) and logged every persistent znode.
func TestForeignMembersAndRecordsAreBounded(t *testing.T) {
	root, logs, reg := testPath(t), &logBuffer{}, prometheus.NewRegistry()
	forger := connect(t, zkc.Addrs())
	conn := forger.Conn()
	for _, p := range []string{"/zkelecthttp", root, root + "/members", root + "/owners"} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	ids := func(prefix string) []string {
		out := make([]string, 2000)
		for i := range out {
			out[i] = prefix + strconv.Itoa(i)
		}
		return out
	}
	under := func(dir string, ids []string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = root + "/" + dir + "/" + id
		}
		return out
	}
	none := func(string) []byte { return nil }
	createAll(t, conn, under("members", ids("persistent-")), none, 0)
	boundedMember(t, root, logs, reg)
	base := runtime.NumGoroutine()

	forged := ids("forged-")
	createAll(t, conn, under("members", forged), none, zk.FlagEphemeral)
	record := []byte(fmt.Sprintf(`{"session":%d,"leading":{}}`, forger.ID()))
	createAll(t, conn, under("owners", forged), func(string) []byte { return record }, 0)

	const bound, refused = 256, 2001 - 256 // m1 and 2,000 forged of each kind
	var last [2]float64
	// Records over the bound: 1,745 until the member collects those of the
	// members it does not count (as of any absent member, after the restart
	// grace); refused members: 1,745.
	eventually(t, 120*time.Second, "the member to refuse 1,745 members and some records (or run a goroutine for each)", func() bool {
		r, m := gaugeOf(t, reg, "zkelect_partition_root_refused", "kind", "records"), gaugeOf(t, reg, "zkelect_partition_root_refused", "kind", "members")
		if r != last[0] || m != last[1] {
			t.Logf("refused: %v records, %v members", r, m)
			last = [2]float64{r, m}
		}
		return r > 0 && m == refused || runtime.NumGoroutine()-base > 2000
	})
	limit := 2*bound + 200 // a goroutine per record watched by each reader, and some in flight
	eventually(t, 30*time.Second, fmt.Sprintf("the goroutines to settle within %d of the %d before the forged members", limit, base), func() bool {
		return runtime.NumGoroutine()-base <= limit
	})
	t.Logf("goroutines: %d before the forged members, %d after", base, runtime.NumGoroutine())
	for _, line := range []string{"persistent znodes under members ignored", "live members over the reader's bound", "member records over the reader's bound"} {
		if n := logs.count(line); n < 1 || n > 4 {
			t.Errorf("%q logged %d times by 2 readers, want 1 to 4", line, n)
		}
	}
}
