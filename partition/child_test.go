package partition_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// A member in a child process: the test binary re-executed with childEnv
// set runs one Manager instead of the tests, and reports its leaderships
// and writes to the parent's tracker over HTTP.
const (
	childEnv        = "PARTITION_TEST_CHILD" // the member id
	childAddrsEnv   = "PARTITION_TEST_ADDRS"
	childTimeoutEnv = "PARTITION_TEST_SESSION_TIMEOUT"
	childRootEnv    = "PARTITION_TEST_ROOT"
	childShardsEnv  = "PARTITION_TEST_SHARDS"
	childGuardEnv   = "PARTITION_TEST_GUARD" // base URL of the tracker
)

// startChild runs member id in a child process against the tracker served
// at guardURL.
func startChild(t *testing.T, id, root string, shards int, guardURL string) *testenv.Process {
	t.Helper()
	return startChildOn(t, zkc.Addrs(), sessionTimeout, id, root, shards, guardURL)
}

// startChildOn is startChild with a session of timeout to addrs.
func startChildOn(t *testing.T, addrs []string, timeout time.Duration, id, root string, shards int, guardURL string) *testenv.Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("find test binary: %v", err)
	}
	p := testenv.StartProcess(t, exe, []string{"-test.run=^$"}, []string{
		childEnv + "=" + id,
		childAddrsEnv + "=" + strings.Join(addrs, ","),
		childTimeoutEnv + "=" + timeout.String(),
		childRootEnv + "=" + root,
		childShardsEnv + "=" + strconv.Itoa(shards),
		childGuardEnv + "=" + guardURL,
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := p.WaitLine(ctx, func(l string) bool { return l == "running" }); err != nil {
		t.Fatalf("child %s: %v", id, err)
	}
	return p
}

// serve exposes the tracker to child processes; closed at cleanup.
func (tr *tracker) serve(t *testing.T) string {
	mux := http.NewServeMux()
	param := func(r *http.Request) (member, shard string, token zxidfence.Token) {
		q := r.URL.Query()
		tok, _ := strconv.ParseUint(q.Get("token"), 10, 64)
		return q.Get("member"), q.Get("shard"), zxidfence.Token(tok)
	}
	mux.HandleFunc("POST /start", func(w http.ResponseWriter, r *http.Request) {
		m, s, tok := param(r)
		tr.overlapOf(s, tr.begin(m, s, tok, held{znode: r.URL.Query().Get("znode")}))
	})
	mux.HandleFunc("POST /write", func(w http.ResponseWriter, r *http.Request) {
		_, s, tok := param(r)
		tr.write(s, tok)
	})
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, r *http.Request) {
		m, s, _ := param(r)
		tr.stopped(m)(s, nil)
		tr.reason(m, r.URL.Query().Get("reason"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// childMain runs one member until SIGTERM (graceful) or SIGKILL (crash).
func childMain() int {
	id := os.Getenv(childEnv)
	n, _ := strconv.Atoi(os.Getenv(childShardsEnv))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := zerolog.New(os.Stderr).Level(zerolog.InfoLevel).With().Timestamp().Str("member", id).Logger()
	timeout, err := time.ParseDuration(os.Getenv(childTimeoutEnv))
	if err != nil {
		fmt.Println("session timeout:", err)
		return 1
	}
	sess, err := recipe.Connect(ctx, strings.Split(os.Getenv(childAddrsEnv), ","),
		recipe.WithSessionTimeout(timeout), recipe.WithLogger(log))
	if err != nil {
		fmt.Println("connect:", err)
		return 1
	}
	defer sess.Close()
	rt := remoteTracker{base: os.Getenv(childGuardEnv), member: id, client: &http.Client{Timeout: 5 * time.Second}}
	m, err := partition.NewManager(sess, os.Getenv(childRootEnv), partition.Config{
		MemberID:         id,
		Shards:           partition.Range(0, n),
		OnStartedLeading: rt.started,
		OnStoppedLeading: rt.stopped,
		Logger:           log,
	})
	if err != nil {
		fmt.Println("new manager:", err)
		return 1
	}
	fmt.Println("running")
	if err := m.Run(ctx); err != nil {
		fmt.Println("run:", err)
		return 1
	}
	return 0
}

// remoteTracker reports to a tracker served by the parent test process.
type remoteTracker struct {
	base, member string
	client       *http.Client
}

func (rt remoteTracker) post(op, shard string, token zxidfence.Token, extra ...string) {
	q := url.Values{"member": {rt.member}, "shard": {shard}, "token": {strconv.FormatUint(uint64(token), 10)}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	resp, err := rt.client.Post(rt.base+"/"+op+"?"+q.Encode(), "text/plain", nil)
	if err != nil {
		fmt.Println("report:", err)
		return
	}
	resp.Body.Close()
}

func (rt remoteTracker) started(ctx context.Context, shard string, token zxidfence.Token) {
	znode := ""
	if lead, ok := recipe.LeadershipFrom(ctx); ok {
		znode = lead.Znode()
	}
	rt.post("start", shard, token, "znode", znode)
	tick := time.NewTicker(writeInterval)
	defer tick.Stop()
	for {
		rt.post("write", shard, token)
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// stopped reports the reason as a label: "session_expired", "suspended",
// "znode_deleted", or the error's text.
func (rt remoteTracker) stopped(shard string, reason error) {
	rt.post("stop", shard, 0, "reason", reasonName(reason))
}

func reasonName(reason error) string {
	switch {
	case errors.Is(reason, recipe.ErrSessionExpired):
		return "session_expired"
	case errors.Is(reason, recipe.ErrSuspended):
		return "suspended"
	case errors.Is(reason, recipe.ErrZnodeDeleted):
		return "znode_deleted"
	case reason == nil:
		return "nil"
	}
	return reason.Error()
}

// TestCrashedMemberProcessFailsOver kills a member's process (SIGKILL): its
// shards are led by the others within the session timeout plus a bound,
// and the guard never accepts a stale write.
func TestCrashedMemberProcessFailsOver(t *testing.T) {
	const n = 30
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, n)
	tr.checkZnodes(t)
	guardURL := tr.serve(t)
	a := startMember(t, root, "a", shards, tr)
	b := startMember(t, root, "b", shards, tr)
	child := startChild(t, "c", root, n, guardURL)
	waitFor(t, 30*time.Second, "three members balanced, per ZooKeeper", balancedPerOwners(t, a.sess, root, shards, 3))
	if err := child.Kill(); err != nil {
		t.Fatalf("kill child: %v", err)
	}
	crashed := time.Now()
	took := waitFor(t, 20*time.Second, "a and b to lead every shard", func() (bool, string) {
		lead := leaders(t, []*member{a, b})
		return len(lead) == n, fmt.Sprintf("%d/%d led", len(lead), n)
	})
	t.Logf("crash failover: every shard led again %v after SIGKILL (session timeout %v)", took, sessionTimeout)
	// The server expires the session after its timeout and the takeover is
	// not throttled; 3s more is for a loaded machine.
	if bound := sessionTimeout + 3*time.Second; took > bound {
		t.Errorf("failover took %v, more than the session timeout plus 3s (%v)", took, bound)
	}
	waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	t.Logf("balanced over the two survivors %v after the crash", time.Since(crashed))
	tr.check(t, false)
}

// TestStoppedMemberProcessHandsOver stops a member's process with SIGTERM:
// it resigns every shard gracefully (its OnStoppedLeading reported before
// each new leader starts), and the others lead them well before a session
// timeout would have passed.
func TestStoppedMemberProcessHandsOver(t *testing.T) {
	const n = 30
	// The child's session is long, so a handover that waited for its
	// expiry stays far past the bound (half of it), which leaves a loaded
	// machine seconds.
	const childTimeout = 10 * time.Second
	zks := testenv.New(t, testenv.Options{MaxSessionTimeout: childTimeout})
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, n)
	guardURL := tr.serve(t)
	noGrace := func(c *partition.Config) { c.RestartGrace = -1 }
	a := startMemberOn(t, connectTo(t, zks.Addrs(), sessionTimeout), root, "a", shards, tr, noGrace)
	b := startMemberOn(t, connectTo(t, zks.Addrs(), sessionTimeout), root, "b", shards, tr, noGrace)
	child := startChildOn(t, zks.Addrs(), childTimeout, "c", root, n, guardURL)
	waitFor(t, 30*time.Second, "the child to lead its share", func() (bool, string) {
		lead := leaders(t, []*member{a, b})
		return len(lead) == 2*n/3, fmt.Sprintf("a and b lead %d", len(lead))
	})
	if err := child.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM child: %v", err)
	}
	took := waitFor(t, 20*time.Second, "a and b to lead every shard", func() (bool, string) {
		lead := leaders(t, []*member{a, b})
		return len(lead) == n, fmt.Sprintf("%d/%d led", len(lead), n)
	})
	t.Logf("graceful stop of a process: every shard led again after %v", took)
	if bound := childTimeout / 2; took >= bound {
		t.Errorf("took %v, not less than half the child's session timeout %v", took, childTimeout)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := child.Wait(ctx); err != nil {
		t.Errorf("child exit: %v", err)
	}
	tr.check(t, true)
}
