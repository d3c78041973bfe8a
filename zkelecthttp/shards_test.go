package zkelecthttp_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zkelecthttp"
	"github.com/zkelect/zkelect/zxidfence"
)

// member is one partition member served by zkelecthttp on a real server.
type member struct {
	sess *recipe.Session
	mgr  *partition.Manager
	api  *zkelecthttp.Shards
	url  string
}

// startMember runs member id of root over shards on sess, with its
// endpoints on a loopback server; opts.Root, Member, Shards and
// Leaderships are filled in.
func startMember(t *testing.T, servers []string, root, id string, shards []string, opts zkelecthttp.ShardsOptions) *member {
	t.Helper()
	sess := connect(t, servers)
	held := &zkelecthttp.Leaderships{}
	mgr := runManager(t, sess, root, partition.Config{
		MemberID: id, Shards: shards,
		OnStartedLeading: func(ctx context.Context, shard string, token zxidfence.Token) {
			defer held.Hold(shard, id, token)()
			<-ctx.Done()
		},
	})
	opts.Root, opts.Member, opts.Shards, opts.Leaderships = root, id, shards, held
	api, err := zkelecthttp.NewShards(sess, mgr, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Register(mux)
	runShards(t, api)
	return &member{sess: sess, mgr: mgr, api: api, url: serve(t, mux)}
}

// TestShardsServesTheDaemonsEndpoints mounts a member's endpoints on a
// user's mux: /healthz ok, /readyz once it leads its share, /v1/leaderships
// listing every shard it leads with its token and since, /v1/owners every
// shard led by it, /v1/watch starting with the owners snapshot.
func TestShardsServesTheDaemonsEndpoints(t *testing.T) {
	root, shards := testPath(t), partition.Range(0, 4)
	m := startMember(t, zkc.Addrs(), root, "m1", shards, zkelecthttp.ShardsOptions{})
	if code, body := get(t, m.url+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz of a connected member: %d %q", code, body)
	}
	eventually(t, 30*time.Second, "/readyz to pass once the lone member leads every shard", func() bool {
		code, _ := get(t, m.url+"/readyz")
		return code == http.StatusOK
	})
	var ls []zkelecthttp.Leadership
	eventually(t, 10*time.Second, "/v1/leaderships to list the 4 shards", func() bool {
		getJSON(t, m.url+"/v1/leaderships", &ls)
		return len(ls) == len(shards)
	})
	held := m.mgr.Leaderships()
	for i, l := range ls {
		if l.Shard != shards[i] || l.Member != "m1" || l.Token != held[l.Shard].Decimal() || l.Since.IsZero() {
			t.Errorf("/v1/leaderships[%d] = %+v, want shard %s of m1 with token %s and a since", i, l, shards[i], held[l.Shard].Decimal())
		}
	}
	var st zkelecthttp.Owners
	eventually(t, 10*time.Second, "/v1/owners to show m1 leading the 4 shards", func() bool {
		code, _ := get(t, m.url+"/v1/owners")
		if code != http.StatusOK {
			return false
		}
		getJSON(t, m.url+"/v1/owners", &st)
		return st.Members["m1"] == len(shards)
	})
	if st.Root != root || len(st.Shards) != len(shards) || len(st.MemberList) != 1 || st.Shards[0].Token == nil {
		t.Errorf("/v1/owners = %+v", st)
	}
	resp, err := http.Get(m.url + "/v1/watch")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var lines []string
	for len(lines) < 2 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if resp.Header.Get("Content-Type") != "text/event-stream" || len(lines) < 2 || lines[1] != "event: owners" {
		t.Errorf("/v1/watch: %s, first lines %q, want the owners snapshot", resp.Header.Get("Content-Type"), lines)
	}
}

// TestHealthzFailsWhenCutOffPastTheLease cuts a member off from ZooKeeper
// (its link blackholed): /healthz turns 503 with the LeaseError once no
// answer came for a session timeout, and passes again once healed.
func TestHealthzFailsWhenCutOffPastTheLease(t *testing.T) {
	proxy := zkc.NewProxyT(t)
	m := startMember(t, proxy.Addrs(), testPath(t), "m1", partition.Range(0, 2), zkelecthttp.ShardsOptions{})
	if code, body := get(t, m.url+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz of a connected member: %d %s", code, body)
	}
	proxy.Blackhole()
	eventually(t, 30*time.Second, "/healthz to fail with the lease while cut off", func() bool {
		code, body := get(t, m.url+"/healthz")
		var le *zkelecthttp.LeaseError
		return code == http.StatusServiceUnavailable && strings.Contains(body, "lease ran out") && errors.As(m.api.Healthy(), &le)
	})
	proxy.Heal()
	eventually(t, 30*time.Second, "/healthz to pass again once healed", func() bool {
		code, _ := get(t, m.url+"/healthz")
		return code == http.StatusOK
	})
}

// TestRunStartedWhileCutOffServesOnceTheSessionIsBack starts Shards.Run
// (the daemon's follower of the root for /v1/owners and /v1/watch) while
// its member is cut off from ZooKeeper past the session timeout, its
// session expired. Run once failed for good with the expired session's
// error (CI: "list the elections under ...: session 0x.. expired before
// the request was sent"), leaving /v1/owners and /v1/watch dead while the
// member lived on; it waits instead, and once the link heals /v1/owners
// shows the member leading its shards again and /v1/watch streams.
func TestRunStartedWhileCutOffServesOnceTheSessionIsBack(t *testing.T) {
	proxy := zkc.NewProxyT(t)
	root, shards := testPath(t), partition.Range(0, 2)
	sess := connect(t, proxy.Addrs())
	mgr := runManager(t, sess, root, partition.Config{MemberID: "m1", Shards: shards})
	eventually(t, 30*time.Second, "m1 leading both shards", func() bool { return len(mgr.Leaderships()) == len(shards) })
	api, err := zkelecthttp.NewShards(sess, mgr, zkelecthttp.ShardsOptions{Root: root, Member: "m1", Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Register(mux)
	url := serve(t, mux)
	proxy.Blackhole()
	proxy.Cut()
	eventually(t, 30*time.Second, "the member disconnected", func() bool { return !sess.Connected() })
	if err := testenv.ExpireConn(t.Context(), zkc.Addrs(), sess.Conn()); err != nil {
		t.Fatalf("expire the member's session: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- api.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Shards.Run once cancelled: %v", err)
		}
	}()
	select { // past the reads' own retries (twice the session timeout)
	case err := <-done:
		done <- err
		t.Fatalf("Shards.Run ended while cut off: %v", err)
	case <-time.After(3 * sess.Timeout()):
	}
	proxy.Heal()
	eventually(t, 30*time.Second, "/v1/owners to show m1 leading both shards", func() bool {
		code, _ := get(t, url+"/v1/owners")
		if code != http.StatusOK {
			return false
		}
		var st zkelecthttp.Owners
		getJSON(t, url+"/v1/owners", &st)
		return st.Members["m1"] == len(shards)
	})
	eventually(t, 30*time.Second, "/v1/watch to stream", func() bool {
		rctx, rcancel := context.WithCancel(t.Context())
		defer rcancel()
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, url+"/v1/watch", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// TestHealthzNamesAFailingCheck: a Check of the user's (the daemon's is a
// child outliving its grace) turns /healthz 503 with its reason, and 200
// again once it holds.
func TestHealthzNamesAFailingCheck(t *testing.T) {
	var failing atomic.Pointer[error]
	check := func() error {
		if err := failing.Load(); err != nil {
			return *err
		}
		return nil
	}
	m := startMember(t, zkc.Addrs(), testPath(t), "m1", partition.Range(0, 1),
		zkelecthttp.ShardsOptions{Checks: []zkelecthttp.Check{check}})
	if code, body := get(t, m.url+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz with its check holding: %d %s", code, body)
	}
	err := errors.New("worker wedged")
	failing.Store(&err)
	if code, body := get(t, m.url+"/healthz"); code != http.StatusServiceUnavailable || body != "unhealthy: worker wedged\n" {
		t.Errorf("/healthz with a failing check: %d %q, want 503 naming it", code, body)
	}
	failing.Store(nil)
	if code, body := get(t, m.url+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz once the check holds again: %d %s", code, body)
	}
}

// TestReadinessIgnoresPersistentZnodesUnderMembers: a persistent znode
// under <root>/members is no member, for /readyz as for the Manager. It
// once counted as one: a lone member leading all 6 shards waited forever
// for its "fair share" of 3.
func TestReadinessIgnoresPersistentZnodesUnderMembers(t *testing.T) {
	s, root, shards := connect(t, zkc.Addrs()), testPath(t), partition.Range(0, 6)
	for _, p := range []string{path.Dir(root), root, root + "/members", root + "/members/ghost"} {
		if _, err := s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	mgr := runManager(t, s, root, partition.Config{MemberID: "m1", Shards: shards})
	api, err := zkelecthttp.NewShards(s, mgr, zkelecthttp.ShardsOptions{Root: root, Member: "m1", Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the lone member leading every shard to be ready", func() bool {
		return len(mgr.Leaderships()) == len(shards) && api.Ready(t.Context())
	})
	api.Drain()
	if api.Ready(t.Context()) {
		t.Error("ready after Drain")
	}
}
