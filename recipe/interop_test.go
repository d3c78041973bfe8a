package recipe_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// These tests put Go candidates beside other clients' participants on one
// election path: Apache Curator's LeaderLatch (a real JVM running
// testdata/curator/LatchParticipant.java) and hand-made znodes of other
// naming conventions.

// curatorJars are the jars LatchParticipant needs, as Debian's
// libcurator-recipes-java and zookeeper packages install them.
var curatorJars = []string{
	"curator-recipes.jar", "curator-framework.jar", "curator-client.jar",
	"zookeeper.jar", "zookeeper-jute.jar", "guava.jar", "slf4j-api.jar", "slf4j-nop.jar",
}

const curatorInstallHint = "install Java 17 and Apache Curator: `make deps` " +
	"(apt-get install default-jdk-headless libcurator-recipes-java zookeeper)"

// curatorClasspath compiles LatchParticipant with javac into a temporary
// directory and returns the classpath that runs it. It fails (never skips)
// when javac or a jar is missing. The jars are looked up in
// $ZKELECT_JAVA_LIBS, default /usr/share/java.
func curatorClasspath(t *testing.T) string {
	t.Helper()
	libs := os.Getenv("ZKELECT_JAVA_LIBS")
	if libs == "" {
		libs = "/usr/share/java"
	}
	cp := make([]string, 0, len(curatorJars)+1)
	for _, j := range curatorJars {
		p := filepath.Join(libs, j)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("Curator interop needs %s: %v; %s", p, err, curatorInstallHint)
		}
		cp = append(cp, p)
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Fatalf("Curator interop needs javac: %v; %s", err, curatorInstallHint)
	}
	classes := t.TempDir()
	src, err := filepath.Abs(filepath.Join("testdata", "curator", "LatchParticipant.java"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, javac, "-d", classes, "-cp", strings.Join(cp, ":"), src).CombinedOutput()
	if err != nil {
		t.Fatalf("javac LatchParticipant: %v\n%s", err, out)
	}
	return strings.Join(append([]string{classes}, cp...), ":")
}

// curator is one LatchParticipant process, driven through a FIFO.
type curator struct {
	id   string
	proc *testenv.Process
	ctl  *os.File
	n    int // last command number
}

// startCurator runs a LeaderLatch participant with id on path and waits
// until it has started its latch.
func startCurator(t *testing.T, classpath, path, id string) *curator {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "ctl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	// O_RDWR never blocks on a FIFO; closing it is the participant's EOF.
	ctl, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open control fifo: %v", err)
	}
	proc := testenv.StartProcess(t, "java",
		[]string{"-Xss512k", "-XX:TieredStopAtLevel=1", "-cp", classpath, "LatchParticipant", zkc.ConnectString(), path, id, fifo}, nil)
	t.Cleanup(func() { _ = ctl.Close() }) // runs before the process is killed
	c := &curator{id: id, proc: proc, ctl: ctl}
	c.line(t, func(l string) bool { return l == "READY" })
	return c
}

// line waits for the participant's next output line that match accepts.
func (c *curator) line(t *testing.T, match func(string) bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), obsWait)
	defer cancel()
	l, err := c.proc.WaitLine(ctx, match)
	if err != nil {
		t.Fatalf("curator %s: %v", c.id, err)
	}
	return l
}

// do sends a command and returns the fields of its answer after the verb
// and number.
func (c *curator) do(t *testing.T, verb, answer string) []string {
	t.Helper()
	c.n++
	if _, err := fmt.Fprintf(c.ctl, "%s %d\n", verb, c.n); err != nil {
		t.Fatalf("curator %s: send %s: %v", c.id, verb, err)
	}
	prefix := fmt.Sprintf("%s %d", answer, c.n)
	l := c.line(t, func(l string) bool { return l == prefix || strings.HasPrefix(l, prefix+" ") })
	return strings.Fields(l)[2:]
}

// leads asks the participant whether its LeaderLatch has leadership.
func (c *curator) leads(t *testing.T) bool {
	t.Helper()
	return c.do(t, "state", "STATE")[0] == "true"
}

// awaitLead waits (up to 30s, in the JVM) until the latch leads.
func (c *curator) awaitLead(t *testing.T) {
	t.Helper()
	if got := c.do(t, "await", "AWAIT"); got[0] != "true" {
		t.Fatalf("curator %s did not lead", c.id)
	}
}

// close closes the latch (its znode is deleted) and waits for the exit.
func (c *curator) close(t *testing.T) {
	t.Helper()
	c.do(t, "close", "CLOSED")
	ctx, cancel := context.WithTimeout(t.Context(), obsWait)
	defer cancel()
	if err := c.proc.Wait(ctx); err != nil {
		t.Fatalf("curator %s exit: %v", c.id, err)
	}
}

// electionState checks that exactly one participant claims leadership and
// that it is the one the znodes put first, as every client sees them. The
// Go candidates' wait is settled first: each waiting candidate's session
// watches its predecessor on the server, so its decision has been made.
type electionState struct {
	sess    *recipe.Session
	path    string
	gos     map[string]*campaigner
	goSess  map[string]*recipe.Session
	curator map[string]*curator
}

func (e *electionState) assertLeader(t *testing.T, want string) {
	t.Helper()
	ps, err := recipe.Participants(t.Context(), e.sess, e.path)
	if err != nil {
		t.Fatalf("participants: %v", err)
	}
	if len(ps) == 0 || ps[0].ID != want {
		t.Fatalf("first znode belongs to %v, want %s", ps, want)
	}
	await(t, "go candidates settled", func() string {
		w := serverWatches(t.Context(), t, zkc, e.path)
		for i, p := range ps {
			s := e.goSess[p.ID]
			if s == nil || i == 0 {
				continue
			}
			if !slices.Contains(w[s.ID()], ps[i-1].Znode) {
				return fmt.Sprintf("%s does not watch its predecessor %s yet (watches %v)", p.ID, ps[i-1].Znode, w[s.ID()])
			}
		}
		return ""
	})
	var claims []string
	for id, g := range e.gos {
		if g.cand.IsLeader() {
			claims = append(claims, id)
		}
	}
	for id, c := range e.curator {
		if c.leads(t) {
			claims = append(claims, id)
		}
	}
	if len(claims) != 1 || claims[0] != want {
		t.Fatalf("participants claiming leadership: %v, want exactly [%s] (order %v)", claims, want, ids(ps))
	}
}

func ids(ps []recipe.Participant) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

// TestCuratorLeaderLatchInterop: Go candidates with the default naming and
// Curator LeaderLatch participants on one path agree on one leader at each
// step, and leadership passes both ways between them.
func TestCuratorLeaderLatchInterop(t *testing.T) {
	classpath := curatorClasspath(t)
	path := "/interop/latch"
	e := &electionState{
		sess: obsSession(t, zkc.ConnectString()), path: path,
		gos: map[string]*campaigner{}, goSess: map[string]*recipe.Session{}, curator: map[string]*curator{},
	}
	joinGo := func(id string) *campaigner {
		s := obsSession(t, zkc.ConnectString())
		e.goSess[id], e.gos[id] = s, campaign(t, s, path, id)
		return e.gos[id]
	}
	observed := observeLeaders(t, e.sess, path)
	// Join order is election order: java-1, go-1, go-2, java-2.
	e.curator["java-1"] = startCurator(t, classpath, path, "java-1")
	e.curator["java-1"].awaitLead(t)
	joinGo("go-1")
	awaitParticipants(t, e.sess, path, "java-1", "go-1")
	joinGo("go-2")
	awaitParticipants(t, e.sess, path, "java-1", "go-1", "go-2")
	e.curator["java-2"] = startCurator(t, classpath, path, "java-2")
	ps := awaitParticipants(t, e.sess, path, "java-1", "go-1", "go-2", "java-2")
	for _, p := range ps {
		if !strings.Contains(p.Znode, "_c_") || !strings.Contains(p.Znode, "-latch-") {
			t.Errorf("znode %s (%s) is not in Curator's LeaderLatch naming", p.Znode, p.ID)
		}
	}
	e.assertLeader(t, "java-1")

	// The Curator leader leaves: the next in line, a Go candidate, takes over.
	e.curator["java-1"].close(t)
	delete(e.curator, "java-1")
	lead := e.gos["go-1"].awaitWin(t)
	e.assertLeader(t, "go-1")
	if l, err := recipe.Leader(t.Context(), e.sess, path); err != nil || l.Token != lead.Token() {
		t.Fatalf("Leader = %+v, %v; want token %v", l, err, lead.Token())
	}

	// Go leader leaves: the next Go candidate; then it leaves: Curator.
	if err := e.gos["go-1"].cand.Close(); err != nil {
		t.Fatalf("close go-1: %v", err)
	}
	delete(e.gos, "go-1")
	e.gos["go-2"].awaitWin(t)
	e.assertLeader(t, "go-2")
	if err := e.gos["go-2"].cand.Close(); err != nil {
		t.Fatalf("close go-2: %v", err)
	}
	delete(e.gos, "go-2")
	e.curator["java-2"].awaitLead(t)
	e.assertLeader(t, "java-2")

	// A Go newcomer waits behind the Curator leader.
	joinGo("go-3")
	awaitParticipants(t, e.sess, path, "java-2", "go-3")
	e.assertLeader(t, "java-2")
	e.curator["java-2"].close(t)
	delete(e.curator, "java-2")
	e.gos["go-3"].awaitWin(t)
	e.assertLeader(t, "go-3")

	// An outside observer saw leaders only in this order (it may miss a
	// short reign, never reorder one).
	order := []string{"java-1", "go-1", "go-2", "java-2", "go-3"}
	got := observed()
	t.Logf("observer saw leaders %v", got)
	if !isSubsequence(got, order) || len(got) == 0 || got[len(got)-1] != "go-3" {
		t.Fatalf("observer saw leaders %v, want them in the order %v ending with go-3", got, order)
	}
}

// observeLeaders runs Observe on path until the returned function is
// called, which returns the ids of the leaders seen, in order.
func observeLeaders(t *testing.T, s *recipe.Session, path string) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ch := recipe.Observe(ctx, s, path)
	done := make(chan []string, 1)
	go func() {
		var seen []string
		for obs := range ch {
			if obs.HasLeader && (len(seen) == 0 || seen[len(seen)-1] != obs.Leader.ID) {
				seen = append(seen, obs.Leader.ID)
			}
		}
		done <- seen
	}()
	var seen []string
	stop := func() []string {
		if cancel != nil {
			cancel()
			seen, cancel = <-done, nil
		}
		return seen
	}
	t.Cleanup(func() { stop() })
	return stop
}

// isSubsequence reports whether got lists elements of order in order.
func isSubsequence(got, order []string) bool {
	i := 0
	for _, g := range got {
		for i < len(order) && order[i] != g {
			i++
		}
		if i == len(order) {
			return false
		}
		i++
	}
	return true
}

// TestWrappedSuffixNeverLeadsBesideLeader: znodes of other conventions whose
// suffixes sit on both sides of the counter's wrap share the path with real
// candidates; order stays serial, so a wrapped suffix never goes first.
//
// ZooKeeper's counter cannot be pushed near 2^31 in a test (it is the
// parent's cversion), so the picture is rotated: serial order depends only
// on differences, so real candidates keep their small sequence numbers and
// hand-made ephemeral znodes take the places just before the wrap
// (2147483646, 2147483647) and just after it (-2147483648, -2147483647).
// In serial order all of those come after the real candidates (the live
// span stays under 2^31); a signed or string comparison would put the
// negative ones first, so observers would name one of them leader and the
// successor of the sitting leader would wait behind it forever.
func TestWrappedSuffixNeverLeadsBesideLeader(t *testing.T) {
	ctx := t.Context()
	raw := obsRaw(t, zkc.ConnectString()) // another client, holding the hand-made znodes
	path := obsPath(t, raw)
	s := obsSession(t, zkc.ConnectString())
	hand := func(name, id string) string {
		t.Helper()
		p, err := raw.Create(path+"/"+name, []byte(id), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return p
	}

	// Literal wrap, no real candidate: the sitting leader at 2147483647
	// stays first beside newcomers at -2147483648 and -2147483647.
	sitting := hand("_c_3f1e3c8e-5b1a-4d8e-9a43-0c8b7f1d2e11-latch-2147483647", "sitting")
	hand("_c_5d9b2f6a-8c3e-4f7a-b1d2-6e4a9c0b7f33-latch--2147483648", "wrapped-curator")
	hand("9e2b7c4d1a8f4e6b9c3d5f7a1b2c4d6e__lock__-2147483647", "wrapped-kazoo")
	if l, err := recipe.Leader(ctx, s, path); err != nil || l.Znode != sitting {
		t.Fatalf("Leader = %+v, %v; want the sitting leader %s", l, err, sitting)
	}
	if err := raw.Delete(sitting, -1); err != nil {
		t.Fatal(err)
	}
	if l, err := recipe.Leader(ctx, s, path); err != nil || l.ID != "wrapped-curator" {
		t.Fatalf("after the sitting leader left, Leader = %+v, %v; want wrapped-curator", l, err)
	}
	for _, p := range mustParticipants(t, s, path) {
		if err := raw.Delete(p.Znode, -1); err != nil {
			t.Fatal(err)
		}
	}

	// Rotated: real candidates, then hand-made znodes around the wrap.
	hand("7c1d3e5f7a9b4c2d8e6f0a1b3c5d7e9f__lock__2147483646", "before-wrap-kazoo")
	hand("_c_1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d-lock-2147483647", "before-wrap-curator-lock")
	first := campaign(t, s, path, "first")
	lead := first.awaitWin(t)
	second := campaign(t, s, path, "second")
	awaitParticipants(t, s, path, "before-wrap-kazoo", "before-wrap-curator-lock", "first", "second")
	hand("_c_9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a-latch--2147483648", "after-wrap-curator")
	hand("n_-2147483647", "after-wrap-plain")
	ps := awaitParticipants(t, s, path, "before-wrap-kazoo", "before-wrap-curator-lock", "first", "second",
		"after-wrap-curator", "after-wrap-plain")
	want := []string{"first", "second", "before-wrap-kazoo", "before-wrap-curator-lock", "after-wrap-curator", "after-wrap-plain"}
	if got := ids(ps); !slices.Equal(got, want) {
		t.Fatalf("election order %v, want %v", got, want)
	}
	if !first.cand.IsLeader() || second.cand.IsLeader() {
		t.Fatalf("first leads: %v, second leads: %v; want only first", first.cand.IsLeader(), second.cand.IsLeader())
	}
	if err := lead.Resign(ctx); err != nil {
		t.Fatalf("resign: %v", err)
	}
	second.awaitWin(t) // a signed or string order would leave it waiting behind a wrapped znode
	if l, err := recipe.Leader(ctx, s, path); err != nil || l.ID != "second" {
		t.Fatalf("Leader = %+v, %v; want second", l, err)
	}
	if first.cand.IsLeader() {
		t.Fatal("first leads again after resigning")
	}
}

func mustParticipants(t *testing.T, s *recipe.Session, path string) []recipe.Participant {
	t.Helper()
	ps, err := recipe.Participants(t.Context(), s, path)
	if err != nil {
		t.Fatalf("participants: %v", err)
	}
	return ps
}

// TestStraddlingSuffixesOrderByCreation: when the live suffixes span half
// the counter's circle or more, they cannot tell which came first; then
// candidates and observers order by czxid, the order ZooKeeper applied the
// creates. The hand-made znodes at 1073741824 and -1073741824 were created
// before the real candidate (whose suffix is small), so they come first
// although a serial reading of the suffixes alone could put it anywhere.
func TestStraddlingSuffixesOrderByCreation(t *testing.T) {
	ctx := t.Context()
	raw := obsRaw(t, zkc.ConnectString())
	path := obsPath(t, raw)
	s := obsSession(t, zkc.ConnectString())
	var hand []string
	for _, name := range []string{"n_1073741824", "n_-1073741824"} {
		p, err := raw.Create(path+"/"+name, []byte(name), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		hand = append(hand, p)
	}
	newest := campaign(t, s, path, "real")
	ps := awaitParticipants(t, s, path, "n_1073741824", "n_-1073741824", "real")
	if got, want := ids(ps), []string{"n_1073741824", "n_-1073741824", "real"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want creation order %v", got, want)
	}
	if l, err := recipe.Leader(ctx, s, path); err != nil || l.Znode != hand[0] {
		t.Fatalf("Leader = %+v, %v; want %s", l, err, hand[0])
	}
	await(t, "real candidate watches its predecessor and its own znode", func() string {
		w := serverWatches(ctx, t, zkc, path)[s.ID()]
		want := []string{hand[1], ps[2].Znode}
		slices.Sort(w)
		slices.Sort(want)
		if !slices.Equal(w, want) {
			return fmt.Sprintf("it watches %v, want %v", w, want)
		}
		return ""
	})
	if newest.cand.IsLeader() {
		t.Fatal("the last-created candidate leads")
	}
	for _, p := range hand {
		if err := raw.Delete(p, -1); err != nil {
			t.Fatal(err)
		}
	}
	newest.awaitWin(t)
}
