package chaos

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// slot is one member: its configuration, its proxy (kept across restarts)
// and its current process.
type slot struct {
	cfg   MemberConfig
	proxy *testenv.Proxy
	mu    sync.Mutex
	proc  *testenv.Process
}

func (s *slot) process() *testenv.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// harness runs the members and injects faults.
type harness struct {
	t       *testing.T
	cluster *testenv.Cluster
	slots   []*slot
	rec     *Recorder
	files   []string
	timeout time.Duration
	shards  []string // every election that must have a leader
	dir     string
	tail    *tailer // follows the histories for awaitLeaders
}

const chaosRoot = "/chaos"

// newHarness starts the ensemble, the shared resources and the members:
// singles run the one recipe election, the others a partition manager over
// shards shards.
func newHarness(t *testing.T, singles, managers, shards int, timeout time.Duration) *harness {
	dir := t.TempDir()
	c := testenv.New(t, testenv.Options{Servers: 3})
	h := &harness{t: t, cluster: c, timeout: timeout, shards: []string{SingleShard}, dir: dir, tail: newTailer()}
	for i := range shards {
		h.shards = append(h.shards, fmt.Sprint(i))
	}
	rec, err := OpenRecorder(filepath.Join(dir, "harness.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close() })
	h.rec, h.files = rec, []string{filepath.Join(dir, "harness.jsonl")}
	dbPath := filepath.Join(dir, "fence.db")
	h.prepare(dbPath)
	for i := range singles + managers {
		role, name := RoleSingle, fmt.Sprintf("single-%d", i)
		if i >= singles {
			role, name = RoleShards, fmt.Sprintf("member-%d", i-singles)
		}
		s := &slot{proxy: c.NewProxyT(t)}
		s.cfg = MemberConfig{Member: name, Role: role, Servers: s.proxy.Addrs(), Root: chaosRoot,
			Shards: shards, SessionTimeout: timeout, WriteEvery: 100 * time.Millisecond,
			History: filepath.Join(dir, name+".jsonl"), Log: filepath.Join(dir, name+".log"), SQLite: dbPath}
		h.files = append(h.files, s.cfg.History)
		h.slots = append(h.slots, s)
		h.start(s)
	}
	return h
}

// prepare creates the guard's table and the ZooKeeper target parent.
func (h *harness) prepare(dbPath string) {
	ctx, cancel := context.WithTimeout(h.t.Context(), time.Minute)
	defer cancel()
	db, err := sql.Open("sqlite", SQLiteDSN(dbPath))
	if err != nil {
		h.t.Fatal(err)
	}
	defer db.Close()
	g, err := zxidfence.NewSQL(db, zxidfence.SQLite)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := g.CreateTable(ctx); err != nil {
		h.t.Fatalf("create fence table: %v", err)
	}
	conn := h.conn()
	defer conn.Close()
	for _, p := range []string{chaosRoot, DataDir(chaosRoot)} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			h.t.Fatalf("create %s: %v", p, err)
		}
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func (h *harness) conn() *zk.Conn {
	conn, _, err := zk.Connect(h.cluster.Addrs(), 10*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		h.t.Fatal(err)
	}
	return conn
}

// start launches s's member process (the test binary re-executed).
func (h *harness) start(s *slot) {
	js, err := json.Marshal(s.cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	// Race reports go to files the harness sorts through at the end
	// (knownRace), not to a non-zero exit status.
	gorace := "GORACE=exitcode=0 log_path=" + filepath.Join(h.dir, "race")
	p := testenv.StartProcess(h.t, os.Args[0], nil, []string{MemberEnv + "=" + string(js), gorace})
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
}

// awaitLeaders waits until every expected shard has an acting leader in the
// histories, or until limit passes (then the checker reports the rest). It
// returns the shards still without one.
func (h *harness) awaitLeaders(ctx context.Context, limit time.Duration) (missing []string) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if led, err := h.tail.leading(h.files); err == nil {
			missing = missing[:0]
			for _, s := range h.shards {
				if led[s] == 0 {
					missing = append(missing, s)
				}
			}
			if len(missing) == 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return missing
		case <-tick.C:
		}
	}
}

// stopMembers asks every member to stop (SIGTERM) and records a leftover
// for each that does not exit cleanly in time.
func (h *harness) stopMembers(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range h.slots {
		s.proxy.Heal()
		wg.Go(func() {
			p := s.process()
			_ = p.Signal(syscall.SIGTERM)
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := p.Wait(wctx); err != nil {
				_ = h.rec.Record(Record{Kind: KindLeftover, Member: s.cfg.Member,
					Detail: fmt.Sprintf("process %d did not stop cleanly: %v", p.PID(), err)})
				_ = p.Kill()
			}
		})
	}
	wg.Wait()
}

// checkZnodes records every ephemeral znode under the chaos root still
// there once the members' sessions are gone (waiting up to twice the
// session timeout for sessions of killed processes to expire).
func (h *harness) checkZnodes(ctx context.Context) {
	conn := h.conn()
	defer conn.Close()
	deadline := time.Now().Add(2*h.timeout + 5*time.Second)
	for {
		left, err := ephemerals(conn, chaosRoot)
		if err == nil && len(left) == 0 {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				left = append(left, "error walking the tree: "+err.Error())
			}
			for _, z := range left {
				_ = h.rec.Record(Record{Kind: KindLeftover, Detail: "ephemeral znode " + z})
			}
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ephemerals lists the ephemeral znodes under root.
func ephemerals(conn *zk.Conn, root string) ([]string, error) {
	kids, _, err := conn.Children(root)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	var out []string
	for _, k := range kids {
		p := root + "/" + k
		_, st, err := conn.Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if st.EphemeralOwner != 0 {
			out = append(out, fmt.Sprintf("%s (session 0x%x)", p, st.EphemeralOwner))
			continue
		}
		sub, err := ephemerals(conn, p)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

// report reads the histories, runs the checker and fails the test on any
// violation, naming the seed.
func (h *harness) report(seed uint64, bound time.Duration) {
	recs, err := ReadFiles(h.files...)
	if err != nil {
		h.t.Fatal(err)
	}
	known, races, err := raceReports(h.dir)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, r := range races {
		recs = append(recs, Record{Time: time.Now(), Kind: KindLeftover, Detail: "data race in a member:\n" + r})
	}
	rep := Check(recs, CheckConfig{Shards: h.shards, SessionTimeout: h.timeout, Bound: bound})
	h.t.Logf("chaos seed %d, %d records, %d known go-zookeeper data races (sendSetWatches/recvLoop) ignored\n%s",
		seed, len(recs), known, rep.Summary)
	if rep.OK() {
		return
	}
	var b strings.Builder
	for _, v := range rep.Violations {
		b.WriteString(v.String() + "\n")
	}
	h.t.Errorf("chaos seed %d: violations by rule %v (rerun with -chaos.seed=%d; histories kept in %s):\n%s",
		seed, rep.Counts, seed, h.keep(seed), b.String())
}

// keep copies the history files out of the test's temporary directory, for
// a failed run, and returns where to.
func (h *harness) keep(seed uint64) string {
	dst, err := os.MkdirTemp("", fmt.Sprintf("zkelect-chaos-%d-", seed))
	if err != nil {
		return "(not kept: " + err.Error() + ")"
	}
	logs, _ := filepath.Glob(filepath.Join(h.dir, "*.log"))
	for _, f := range append(logs, h.files...) {
		if b, err := os.ReadFile(f); err == nil {
			_ = os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644)
		}
	}
	return dst
}

// logOwners logs who ZooKeeper says leads the shards in missing: the
// evidence for a liveness failure.
func (h *harness) logOwners(ctx context.Context, missing []string) {
	sess, err := recipe.Connect(ctx, h.cluster.Addrs())
	if err != nil {
		h.t.Logf("owners: %v", err)
		return
	}
	defer sess.Close()
	owners, err := partition.Owners(ctx, sess, PartitionRoot(chaosRoot))
	if err != nil {
		h.t.Logf("owners: %v", err)
		return
	}
	var b strings.Builder
	for _, s := range missing {
		o := owners[s]
		fmt.Fprintf(&b, "  shard %s: leader %q token %s standbys %v\n", s, o.Member, o.Token, o.Standbys)
	}
	kids, _, err := sess.Conn().Children(PartitionRoot(chaosRoot) + "/members")
	h.t.Logf("shards without an acting leader (live members %v %v):\n%s", kids, err, b.String())
}
