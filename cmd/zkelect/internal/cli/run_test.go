package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// procSessionTimeout is the session timeout the tests' zkelect processes
// request (the server allows up to 6 s): long enough that a loaded machine
// does not expire sessions by accident, short enough for quick failovers.
const procSessionTimeout = 3 * time.Second

// testPath returns a fresh znode path for the running test.
func testPath(t *testing.T) string {
	return "/cmdtest/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// testSession opens a session on the shared server for the test.
func testSession(t *testing.T) *recipe.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := recipe.Connect(ctx, zkc.Addrs())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// runArgs is `zkelect run` of the test binary acting as a child.
func runArgs(t *testing.T, zk, election, id string, extra ...string) []string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--zk", zk, "--election", election, "--id", id,
		"--session-timeout", procSessionTimeout.String(), "--grace", "1s", "--log-format", "json"}
	return append(append(args, extra...), "--", self)
}

// participants returns the election's participants, or nil on error.
func participants(t *testing.T, s *recipe.Session, election string) []recipe.Participant {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ps, err := recipe.Participants(ctx, s, election)
	if err != nil {
		t.Logf("participants of %s: %v", election, err)
		return nil
	}
	return ps
}

// startThree starts run processes p1..p3 (p1 through zk1, the others
// directly; extra flags after the defaults) after each other, and waits
// until all three take part and one child runs.
func startThree(t *testing.T, s *recipe.Session, election, events, zk1 string, extra ...string) map[string]*proc {
	procs := map[string]*proc{}
	for i, id := range []string{"p1", "p2", "p3"} {
		zk := zkc.ConnectString()
		if i == 0 {
			zk = zk1
		}
		procs[id] = startProc(t, id, runArgs(t, zk, election, id, extra...), envTestChild+"="+events)
		if i == 0 {
			eventually(t, 20*time.Second, "p1's child to start", func() bool {
				return countKind(readEvents(t, events), "start") == 1
			})
		}
	}
	eventually(t, 20*time.Second, "three participants", func() bool {
		return len(participants(t, s, election)) == 3
	})
	return procs
}

func TestRunStartsExactlyOneChildWithToken(t *testing.T) {
	s := testSession(t)
	election, events := testPath(t), filepath.Join(t.TempDir(), "events")
	startThree(t, s, election, events, zkc.ConnectString())
	ps := participants(t, s, election)
	evs := readEvents(t, events)
	if n := countKind(evs, "start"); n != 1 {
		t.Fatalf("%d children started among three run processes, want 1: %v", n, evs)
	}
	leader := ps[0]
	got := evs[0].fields
	want := []string{leader.ID, leader.Token.Decimal(), election, leader.Znode}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("child environment field %d = %q, want %q (child saw %v)", i, got[i], w, got)
		}
	}
	if leader.ID != "p1" {
		t.Errorf("leader %s, want p1 (the first to campaign)", leader.ID)
	}
}

func TestRunFailoverWhenLeaderKilled(t *testing.T) {
	s := testSession(t)
	election, events := testPath(t), filepath.Join(t.TempDir(), "events")
	procs := startThree(t, s, election, events, zkc.ConnectString())
	first := readEvents(t, events)[0]
	childPID, _ := strconv.Atoi(first.fields[4])

	start := time.Now()
	procs["p1"].kill()
	eventually(t, 10*time.Second, "the killed leader's child to die with it", func() bool {
		return !processAlive(childPID)
	})
	eventually(t, procSessionTimeout+10*time.Second, "a child to start elsewhere", func() bool {
		return countKind(readEvents(t, events), "start") == 2
	})
	took := time.Since(start)
	t.Logf("failover after SIGKILL of the leader: %s (session timeout %s)", took, procSessionTimeout)
	if bound := procSessionTimeout + 3*time.Second; took > bound {
		t.Errorf("failover took %s, want within session timeout + 3s = %s", took, bound)
	}
	evs := readEvents(t, events)
	second := evs[len(evs)-1]
	if second.id() == "p1" {
		t.Errorf("the new child runs under the killed p1")
	}
	if a, b := mustUint(t, first.fields[1]), mustUint(t, second.fields[1]); b <= a {
		t.Errorf("new leader's token %d is not above the old %d", b, a)
	}
}

func TestRunCutOffLeaderStopsChildBeforeNewLeaderStarts(t *testing.T) {
	s := testSession(t)
	election, events := testPath(t), filepath.Join(t.TempDir(), "events")
	proxy := zkc.NewProxyT(t)
	procs := startThree(t, s, election, events, proxy.ConnectString())

	proxy.Blackhole()
	eventually(t, procSessionTimeout+10*time.Second, "a child to start elsewhere", func() bool {
		return countKind(readEvents(t, events), "start") == 2
	})
	evs := readEvents(t, events)
	stopAt, startAt := -1, -1
	for i, e := range evs {
		switch {
		case e.kind == "stop" && e.id() == "p1" && stopAt < 0:
			stopAt = i
		case e.kind == "start" && e.id() != "p1" && startAt < 0:
			startAt = i
		}
	}
	if stopAt < 0 || stopAt > startAt {
		t.Fatalf("the cut-off leader's child was not stopped before the new leader's child started: %v", evs)
	}
	procs["p1"].waitStderr(context.Background(), "leadership lost")
}

// TestRunExitsPromptlyAtSIGTERMWhenCutOff: a standby cut off from the
// ensemble exits within about a session timeout of SIGTERM. It once waited
// the library's default close timeout twice (over 20s) to confirm the
// deletion of a znode that goes with its session anyway.
func TestRunExitsPromptlyAtSIGTERMWhenCutOff(t *testing.T) {
	s, election := sittingLeader(t)
	proxy := zkc.NewProxyT(t)
	p := startProc(t, "standby", runArgs(t, proxy.ConnectString(), election, "standby"),
		envTestChild+"="+filepath.Join(t.TempDir(), "events"))
	eventually(t, 20*time.Second, "the standby to take part", func() bool {
		return len(participants(t, s, election)) == 2
	})
	proxy.Blackhole()
	start := time.Now()
	p.signal(syscall.SIGTERM)
	p.wait(30 * time.Second)
	took := time.Since(start)
	t.Logf("cut-off standby exited %s after SIGTERM (session timeout %s)", took, procSessionTimeout)
	if bound := procSessionTimeout + 4*time.Second; took > bound {
		t.Errorf("exited %s after SIGTERM, want within %s", took, bound)
	}
}

// TestRunInterruptedBeforeLeadingExitsWithSignalStatus: a follower that
// never led, stopped by SIGINT or SIGTERM, exits 130 or 143 as it does
// after leading. It once exited 0, as if its job had run and succeeded.
func TestRunInterruptedBeforeLeadingExitsWithSignalStatus(t *testing.T) {
	s, election := sittingLeader(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(signalName(sig), func(t *testing.T) {
			id := "follower-" + signalName(sig)
			p := startProc(t, id, runArgs(t, zkc.ConnectString(), election, id),
				envTestChild+"="+filepath.Join(t.TempDir(), "events"))
			eventually(t, 20*time.Second, id+" to take part", func() bool {
				for _, pt := range participants(t, s, election) {
					if pt.ID == id {
						return true
					}
				}
				return false
			})
			p.signal(sig)
			if code, want := p.wait(20*time.Second), 128+int(sig); code != want {
				t.Fatalf("follower exited %d after %s; want %d", code, signalName(sig), want)
			}
			if msg := p.err.String(); !strings.Contains(msg, "interrupted by "+signalName(sig)) {
				t.Fatalf("stderr does not say the run was interrupted:\n%s", msg)
			}
		})
	}
}

func TestRunExitsWithChildStatus(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	p := startProc(t, "run", runArgs(t, zkc.ConnectString(), testPath(t), "solo"),
		envTestChild+"="+events, "ZKELECT_TEST_CHILD_QUIT=1", "ZKELECT_TEST_CHILD_EXIT=7")
	if code := p.wait(20 * time.Second); code != 7 {
		t.Fatalf("run exited %d, want the child's 7", code)
	}
}

func TestRunRestartCampaignsAgainWithHigherToken(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	p := startProc(t, "run", runArgs(t, zkc.ConnectString(), testPath(t), "solo", "--restart"),
		envTestChild+"="+events, "ZKELECT_TEST_CHILD_QUIT=1", "ZKELECT_TEST_CHILD_EXIT=3")
	eventually(t, 20*time.Second, "the child to be started three times", func() bool {
		return countKind(readEvents(t, events), "start") >= 3
	})
	p.signal(syscall.SIGTERM)
	// 143 when the signal came between children, else the child's status.
	if code := p.wait(10 * time.Second); code != 143 && code != 3 {
		t.Errorf("run exited %d after SIGTERM, want 143 or the child's 3", code)
	}
	var prev uint64
	for _, e := range readEvents(t, events) {
		tok := mustUint(t, e.fields[1])
		if tok <= prev {
			t.Errorf("token %d after %d: each term's token must be higher", tok, prev)
		}
		prev = tok
	}
}

func TestRunForwardsSIGTERMAndExitsWithChildStatus(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	p := startProc(t, "run", runArgs(t, zkc.ConnectString(), testPath(t), "solo"),
		envTestChild+"="+events, "ZKELECT_TEST_CHILD_EXIT=5")
	eventually(t, 20*time.Second, "the child to start", func() bool {
		return countKind(readEvents(t, events), "start") == 1
	})
	p.signal(syscall.SIGTERM)
	if code := p.wait(10 * time.Second); code != 5 {
		t.Errorf("run exited %d, want the child's 5", code)
	}
	evs := readEvents(t, events)
	if len(evs) != 2 || evs[1].kind != "stop" || evs[1].fields[1] != "terminated" {
		t.Errorf("child did not get SIGTERM: %v", evs)
	}
}

func TestRunKillsChildThatIgnoresSIGTERMAfterGrace(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	p := startProc(t, "run", runArgs(t, zkc.ConnectString(), testPath(t), "solo", "--grace", "300ms"),
		envTestChild+"="+events, "ZKELECT_TEST_CHILD_IGNORE_TERM=1")
	eventually(t, 20*time.Second, "the child to start", func() bool {
		return countKind(readEvents(t, events), "start") == 1
	})
	childPID, _ := strconv.Atoi(readEvents(t, events)[0].fields[4])
	start := time.Now()
	p.signal(syscall.SIGTERM)
	if code := p.wait(10 * time.Second); code != 128+int(syscall.SIGKILL) {
		t.Errorf("run exited %d, want 137 (child killed by SIGKILL)", code)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("child killed after %s, before the 300ms grace", took)
	}
	if processAlive(childPID) {
		t.Errorf("child %d still alive", childPID)
	}
}

// TestRunKilledSupervisorTakesChildTreeWithIt: `run` killed with SIGKILL
// cannot stop its child, yet nothing the child started may go on acting
// after the leadership ends. A background process of a shell child once
// survived its supervisor's SIGKILL (the kernel's parent-death signal only
// reaches the direct child).
func TestRunKilledSupervisorTakesChildTreeWithIt(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	args := []string{"run", "--zk", zkc.ConnectString(), "--election", testPath(t), "--id", "solo",
		"--session-timeout", procSessionTimeout.String(), "--grace", "1s", "--log-format", "json",
		"--", "sh", "-c", `sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$1"; wait`, "sh", pidFile}
	p := startProc(t, "run", args)
	var grandchild int
	eventually(t, 20*time.Second, "the child's background process to start", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		grandchild, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	t.Cleanup(func() { _ = syscall.Kill(grandchild, syscall.SIGKILL) })
	p.kill()
	eventually(t, 10*time.Second, "the child's background process to die with run", func() bool {
		return !processAlive(grandchild)
	})
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return n
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// sittingLeader returns a session and a fresh election in which a
// candidate of that session ("leader") leads until the test ends, so that
// a process under test can only wait behind it.
func sittingLeader(t *testing.T) (*recipe.Session, string) {
	t.Helper()
	s := testSession(t)
	election := testPath(t)
	leader, err := recipe.NewCandidate(s, election, recipe.WithParticipantID("leader"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { leader.Close() })
	if _, err := leader.Campaign(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s, election
}

// TestRunWithDigestAuthProtectsItsElection: run with --zk-auth digest (the
// credentials from the environment) creates the election's znodes with the
// group ACL by default: anyone may read them, only the group's identity may
// delete the leader's znode; the child does not see the credentials.
func TestRunWithDigestAuthProtectsItsElection(t *testing.T) {
	s := testSession(t)
	election, events := testPath(t)+"/run", filepath.Join(t.TempDir(), "events") // its parent the test's own
	startProc(t, "p1", runArgs(t, zkc.ConnectString(), election, "p1", "--zk-auth", "digest"),
		envTestChild+"="+events, envZKCredentials+"=cmdgroup:cmdsecret")
	eventually(t, 20*time.Second, "p1's child to start", func() bool { return countKind(readEvents(t, events), "start") == 1 })
	if creds := readEvents(t, events)[0].fields[6]; creds != "-" {
		t.Errorf("the child sees %s=%q; want it unset", envZKCredentials, creds)
	}
	ps := participants(t, s, election)
	if len(ps) != 1 {
		t.Fatalf("participants %v; want p1 (anyone may read)", ps)
	}
	for _, p := range []string{election, ps[0].Znode} {
		acl, _, err := s.Conn().GetACL(p)
		if err != nil {
			t.Fatalf("GetACL %s: %v", p, err)
		}
		// ZooKeeper shows a digest's hash only to clients with ADMIN.
		if len(acl) != 2 || acl[0].Scheme != "digest" || !strings.HasPrefix(acl[0].ID, "cmdgroup:") || acl[0].Perms != zk.PermAll ||
			acl[1] != (zk.ACL{Perms: zk.PermRead, Scheme: "world", ID: "anyone"}) {
			t.Errorf("ACL of %s = %v; want all for digest cmdgroup, read for world:anyone", p, acl)
		}
	}
	if err := s.Conn().Delete(ps[0].Znode, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("an unauthenticated client deleting the leader's znode: %v; want zk.ErrNoAuth", err)
	}
}

// TestRunStoppedBySIGTERMSaysSo: a leader whose child dies of the SIGTERM
// run forwards exits with the child's 143 and says it stopped as asked,
// not that its child failed.
func TestRunStoppedBySIGTERMSaysSo(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	p := startProc(t, "run", []string{"run", "--zk", zkc.ConnectString(), "--election", testPath(t), "--id", "solo",
		"--session-timeout", procSessionTimeout.String(), "--grace", "5s", "--log-format", "json",
		"--", "/bin/sh", "-c", "touch " + shellQuote(started) + "; sleep 100"})
	eventually(t, 20*time.Second, "the child to start", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	p.signal(syscall.SIGTERM)
	if code := p.wait(20 * time.Second); code != 143 {
		t.Fatalf("run exited %d after SIGTERM, want the child's 143", code)
	}
	lines := strings.Split(strings.TrimRight(p.err.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "stopped as asked by SIGTERM") {
		t.Errorf("last stderr line %q: want it to say run stopped as asked", last)
	}
}
