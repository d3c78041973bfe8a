package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// foreignCandidate creates a participant znode the way Curator's LeaderLatch
// (kazoo == false) or kazoo's Election (kazoo == true) names it, owned by
// the test's session, and returns its path.
func foreignCandidate(t *testing.T, s *recipe.Session, election, id string, kazoo bool) string {
	t.Helper()
	conn := s.Conn()
	parts := strings.Split(election[1:], "/")
	for i := range parts {
		p := "/" + strings.Join(parts[:i+1], "/")
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	name := "_c_" + uuid.NewString() + "-latch-"
	if kazoo {
		name = strings.ReplaceAll(uuid.NewString(), "-", "") + "__lock__"
	}
	path, err := conn.Create(election+"/"+name, []byte(id), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatalf("create candidate: %v", err)
	}
	return path
}

func TestStatusReadsCuratorAndKazooElections(t *testing.T) {
	s := testSession(t)
	for _, kazoo := range []bool{false, true} {
		election := testPath(t)
		foreignCandidate(t, s, election, "first", kazoo)
		foreignCandidate(t, s, election, "second", kazoo)
		leader := participants(t, s, election)[0]

		p := startProc(t, "status", []string{"status", "--zk", zkc.ConnectString(), "--election", election})
		if code := p.wait(10 * time.Second); code != 0 {
			t.Fatalf("status exited %d: %s", code, p.err.String())
		}
		out := p.out.String()
		for _, want := range []string{
			"leader:        first",
			"token:         " + leader.Token.Hex() + " (" + leader.Token.EpochCounter() + ")",
			"participants:  2",
			"first", "leader", "second", "standby",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("kazoo=%v: status output lacks %q:\n%s", kazoo, want, out)
			}
		}

		p = startProc(t, "status json", []string{"status", "--zk", zkc.ConnectString(), "--election", election, "-o", "json"})
		if code := p.wait(10 * time.Second); code != 0 {
			t.Fatalf("status -o json exited %d: %s", code, p.err.String())
		}
		var st electionStatus
		if err := json.Unmarshal([]byte(p.out.String()), &st); err != nil {
			t.Fatalf("status -o json: %v\n%s", err, p.out.String())
		}
		if st.Leader == nil || st.Leader.ID != "first" || st.Leader.Token.Decimal != leader.Token.Decimal() ||
			len(st.Participants) != 2 || st.Participants[1].ID != "second" {
			t.Errorf("kazoo=%v: status -o json = %+v", kazoo, st)
		}
	}
}

// TestStatusExitCodesForHealthChecks: 2 for a missing election or one that
// is a partition root, 3 for an election without a leader or a root with
// an unled shard, 0 for a root whose shards are all led.
func TestStatusExitCodesForHealthChecks(t *testing.T) {
	s := testSession(t)
	empty, root := testPath(t)+"/empty", testPath(t)+"/root"
	parts := strings.Split(empty[1:], "/")
	for i := range parts {
		p := "/" + strings.Join(parts[:i+1], "/")
		if _, err := s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	startDaemon(t, root, "m1", 2)
	eventually(t, 20*time.Second, "both shards led", func() bool {
		o := owners(t, s, root)
		return len(o) == 2 && o["0"].Member != "" && o["1"].Member != ""
	})
	status := func(target ...string) (int, string, string) {
		p := startProc(t, "status", append([]string{"status", "--zk", zkc.ConnectString()}, target...))
		return p.wait(10 * time.Second), p.out.String(), p.err.String()
	}
	if code, _, errs := status("--root", root); code != 0 {
		t.Errorf("status of a root with every shard led exited %d: %s", code, errs)
	}
	if code, _, errs := status("--election", testPath(t)+"/missing"); code != 2 || !strings.Contains(errs, "does not exist") {
		t.Errorf("status of a missing election exited %d (%s), want 2", code, errs)
	}
	if code, _, errs := status("--election", root); code != 2 || !strings.Contains(errs, "is a partition root") {
		t.Errorf("status --election on a partition root exited %d (%s), want 2", code, errs)
	}
	if code, out, errs := status("--election", empty); code != 3 || !strings.Contains(out, "leader:        none") {
		t.Errorf("status of an election without a leader exited %d (%s%s), want 3", code, out, errs)
	}
	unled, err := partition.ElectionPath(t.Context(), s, root, "9")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Conn().Create(unled, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := status("--root", root); code != 3 || !strings.Contains(errs, "1 of 3 shards") {
		t.Errorf("status of a root with an unled shard exited %d (%s), want 3", code, errs)
	}
}

func TestWatchPrintsEachLeaderChange(t *testing.T) {
	s := testSession(t)
	election := testPath(t)
	first := foreignCandidate(t, s, election, "first", false)
	second := foreignCandidate(t, s, election, "second", true)

	p := startProc(t, "watch", []string{"watch", "--zk", zkc.ConnectString(), "--election", election, "-o", "json"})
	n := 0
	next := func(what string) watchLine {
		t.Helper()
		n++
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		lines, err := p.out.waitLines(ctx, n)
		if err != nil {
			t.Fatalf("no watch line for %s: %v\n%s", what, err, p.out.String())
		}
		var wl watchLine
		if err := json.Unmarshal([]byte(lines[n-1]), &wl); err != nil {
			t.Fatalf("watch line %q: %v", lines[n-1], err)
		}
		return wl
	}
	if l := next("the first leader"); l.Leader == nil || *l.Leader != "first" || l.Election != election {
		t.Fatalf("first line: %+v", l)
	}
	if err := s.Conn().Delete(first, -1); err != nil {
		t.Fatal(err)
	}
	if l := next("the second leader"); l.Leader == nil || *l.Leader != "second" || l.Token == nil {
		t.Fatalf("second line: %+v", l)
	}
	if err := s.Conn().Delete(second, -1); err != nil {
		t.Fatal(err)
	}
	if l := next("no leader"); l.Leader != nil {
		t.Fatalf("third line: %+v", l)
	}
	p.signal(syscall.SIGINT)
	if code := p.wait(10 * time.Second); code != 0 {
		t.Errorf("watch exited %d after SIGINT", code)
	}
}

// TestWatchSaysWhenItCannotSee: cut off from the ensemble, watch prints
// that the leader is unknown (once), then the leader again after healing.
// It once went silent, its last line ("leader=...") looking current.
func TestWatchSaysWhenItCannotSee(t *testing.T) {
	s := testSession(t)
	election := testPath(t)
	foreignCandidate(t, s, election, "first", false)
	proxy := zkc.NewProxyT(t)
	p := startProc(t, "watch", []string{"watch", "--zk", proxy.ConnectString(), "--election", election,
		"--session-timeout", procSessionTimeout.String()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.waitStdout(ctx, "leader=first")
	proxy.Blackhole()
	p.waitStdout(ctx, "leader unknown")
	proxy.Heal()
	eventually(t, 30*time.Second, "the leader again after healing", func() bool {
		return strings.Count(p.out.String(), "leader=first") == 2
	})
	if n := strings.Count(p.out.String(), "leader unknown"); n != 1 {
		t.Errorf("%d \"leader unknown\" lines for one cut, want 1:\n%s", n, p.out.String())
	}
}

// TestWatchWaitingForARootOutlastsACutOff: watch --root, waiting for the
// fleet, is cut off from ZooKeeper past its session timeout (its session
// expires). It once exited 1 with the connection's error; it keeps
// waiting, and follows the shards once the link healed and a daemon
// created them.
func TestWatchWaitingForARootOutlastsACutOff(t *testing.T) {
	root := testPath(t)
	proxy := zkc.NewProxyT(t)
	const timeout = 2 * time.Second
	p := startProc(t, "watch", []string{"watch", "--zk", proxy.ConnectString(), "--root", root,
		"--session-timeout", timeout.String()})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p.waitStderr(ctx, "has no shards yet: waiting")
	proxy.Blackhole()
	proxy.Cut()
	select { // past the session timeout (the server expires the session) and the reads' own retries
	case <-p.done:
		t.Fatalf("watch exited while cut off (%v):\n%s", p.werr, p.err.String())
	case <-time.After(4 * timeout):
	}
	proxy.Heal()
	startDaemonWith(t, root, "m1", 2, nil)
	p.waitStdout(ctx, "shard=1 leader=m1")
}

// TestWatchWaitsForARootThatDoesNotExistYet starts watch --root before
// the fleet: it says once that it waits, then follows the shards once a
// daemon creates them. It once exited at once.
func TestWatchWaitsForARootThatDoesNotExistYet(t *testing.T) {
	root := testPath(t)
	p := startProc(t, "watch", []string{"watch", "--zk", zkc.ConnectString(), "--root", root})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	waiting := "partition root " + root + " has no shards yet: waiting"
	p.waitStderr(ctx, waiting)
	startDaemonWith(t, root, "m1", 2, nil)
	p.waitStdout(ctx, "shard=1 leader=m1")
	p.signal(syscall.SIGINT)
	if code := p.wait(10 * time.Second); code != 0 {
		t.Errorf("watch exited %d after SIGINT", code)
	}
	if n := strings.Count(p.err.String(), waiting); n != 1 {
		t.Errorf("watch said %d times that it waits, want once:\n%s", n, p.err.String())
	}
}
