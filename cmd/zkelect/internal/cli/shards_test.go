package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// daemon is a `zkelect shards` process and the address it serves HTTP on.
type daemon struct {
	*proc
	member string
	url    string
}

// startDaemon starts a shards daemon for member under root, on a free port,
// and waits until it serves HTTP.
func startDaemon(t *testing.T, root, member string, shards int) *daemon {
	return startDaemonWith(t, root, member, shards, nil)
}

// startDaemonWith is startDaemon with extra arguments and environment.
func startDaemonWith(t *testing.T, root, member string, shards int, extra []string, env ...string) *daemon {
	t.Helper()
	args := []string{"shards", "--zk", zkc.ConnectString(), "--root", root,
		"--member", member, "--shards", fmt.Sprint(shards), "--session-timeout", procSessionTimeout.String(),
		"--listen", "127.0.0.1:0", "--log-format", "json"}
	p := startProc(t, "shards "+member, append(args, extra...), env...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p.waitStderr(ctx, "shards daemon started")
	return &daemon{proc: p, member: member, url: "http://" + listenAddr(t, p.err.String())}
}

// listenAddr finds the listen address in a daemon's JSON log.
func listenAddr(t *testing.T, log string) string {
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var l struct {
			Message string `json:"message"`
			Listen  string `json:"listen"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Message == "shards daemon started" {
			return l.Listen
		}
	}
	t.Fatalf("no listen address in daemon log:\n%s", log)
	return ""
}

func (d *daemon) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(d.url + path)
	if err != nil {
		t.Fatalf("GET %s%s: %v", d.url, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// owners reads the root's shard owners.
func owners(t *testing.T, s *recipe.Session, root string) map[string]partition.Owner {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	o, err := partition.Owners(ctx, s, root)
	if err != nil {
		t.Logf("owners of %s: %v", root, err)
		return nil
	}
	return o
}

// balanced reports whether all n shards are led by exactly the given
// members, none above ceil(n / members).
func balanced(o map[string]partition.Owner, n int, members ...string) bool {
	if len(o) != n {
		return false
	}
	counts := leadCounts(o)
	fair := (n + len(members) - 1) / len(members)
	total := 0
	for _, m := range members {
		if counts[m] == 0 || counts[m] > fair {
			return false
		}
		total += counts[m]
	}
	return total == n
}

func TestShardsDaemonsBalanceServeAndFailOver(t *testing.T) {
	const n = 12
	s := testSession(t)
	root := testPath(t)
	ds := map[string]*daemon{}
	for _, m := range []string{"m1", "m2", "m3"} {
		ds[m] = startDaemon(t, root, m, n)
	}
	eventually(t, 30*time.Second, "12 shards balanced over m1, m2, m3", func() bool {
		return balanced(owners(t, s, root), n, "m1", "m2", "m3")
	})
	o := owners(t, s, root)
	for m, d := range ds {
		eventually(t, 10*time.Second, m+" ready", func() bool {
			code, _ := d.get(t, "/readyz")
			return code == http.StatusOK
		})
		if code, _ := d.get(t, "/healthz"); code != http.StatusOK {
			t.Errorf("%s /healthz: %d", m, code)
		}
		checkLeaderships(t, d, o)
		_, metrics := d.get(t, "/metrics")
		for _, want := range []string{"zkelect_partition_shards_led{", "zkelect_session_state{", "zkelect_daemon_ready 1"} {
			if !strings.Contains(metrics, want) {
				t.Errorf("%s /metrics lacks %s", m, want)
			}
		}
	}

	checkRootStatus(t, root, n, map[string]int{"m1": 4, "m2": 4, "m3": 4})
	watch := startProc(t, "watch --root", []string{"watch", "--zk", zkc.ConnectString(), "--root", root})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var lines []string // the leader lines; member lines come beside them
	eventually(t, 20*time.Second, fmt.Sprintf("watch --root to print %d leader lines", n), func() bool {
		lines = lines[:0]
		for _, l := range strings.Split(watch.out.String(), "\n") {
			if strings.Contains(l, " shard=") {
				lines = append(lines, l)
			}
		}
		return len(lines) >= n
	})
	for _, l := range lines {
		if !strings.Contains(l, " leader=m") || !strings.Contains(l, " token=0x") {
			t.Errorf("watch --root line %q", l)
		}
	}
	for _, m := range []string{"m1", "m2", "m3"} {
		watch.waitStdout(ctx, " member member="+m+" address=")
	}

	start := time.Now()
	ds["m3"].kill()
	eventually(t, procSessionTimeout+15*time.Second, "m3's shards taken over by m1 and m2", func() bool {
		c := leadCounts(owners(t, s, root))
		return c["m1"]+c["m2"] == n
	})
	t.Logf("shards failover after SIGKILL of a daemon: %s (session timeout %s)", time.Since(start), procSessionTimeout)
	eventually(t, 4*procSessionTimeout+15*time.Second, "m1 and m2 balanced after m3's restart grace", func() bool {
		return balanced(owners(t, s, root), n, "m1", "m2")
	})
	t.Logf("balanced over m1 and m2 after: %s (restart grace 2 x session timeout)", time.Since(start))
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for shard := range ledBy(o, "m3") {
		watch.waitStdout(ctx, fmt.Sprintf(" shard=%s leader=%s ", shard, owners(t, s, root)[shard].Member))
	}

	start = time.Now()
	ds["m2"].signal(syscall.SIGTERM)
	if code := ds["m2"].wait(30 * time.Second); code != 0 {
		t.Errorf("m2 exited %d after SIGTERM, want 0", code)
	}
	eventually(t, 15*time.Second, "m2's shards handed to m1", func() bool {
		return balanced(owners(t, s, root), n, "m1")
	})
	t.Logf("shards handoff after SIGTERM of a daemon: %s", time.Since(start))
}

// checkLeaderships compares a daemon's /v1/leaderships with ZooKeeper.
func checkLeaderships(t *testing.T, d *daemon, o map[string]partition.Owner) {
	t.Helper()
	eventually(t, 10*time.Second, d.member+"'s /v1/leaderships to match ZooKeeper", func() bool {
		_, body := d.get(t, "/v1/leaderships")
		var ls []leadershipView
		if err := json.Unmarshal([]byte(body), &ls); err != nil {
			t.Fatalf("/v1/leaderships: %v: %s", err, body)
		}
		want := ledBy(o, d.member)
		if len(ls) != len(want) {
			return false
		}
		for _, l := range ls {
			tok, ok := want[l.Shard]
			if !ok || l.Member != d.member || l.Token != tok.Decimal() || l.Since.IsZero() {
				return false
			}
		}
		return true
	})
}

// checkRootStatus runs `zkelect status --root` in both formats.
func checkRootStatus(t *testing.T, root string, n int, counts map[string]int) {
	t.Helper()
	p := startProc(t, "status --root", []string{"status", "--zk", zkc.ConnectString(), "--root", root})
	if code := p.wait(10 * time.Second); code != 0 {
		t.Fatalf("status --root exited %d: %s", code, p.err.String())
	}
	out := p.out.String()
	for _, want := range []string{"SHARD", "LEADER", "STANDBYS", "MEMBER", "LEADS", fmt.Sprintf("%d of %d shards", n, n)} {
		if !strings.Contains(out, want) {
			t.Errorf("status --root lacks %q:\n%s", want, out)
		}
	}
	p = startProc(t, "status --root json", []string{"status", "--zk", zkc.ConnectString(), "--root", root, "-o", "json"})
	if code := p.wait(10 * time.Second); code != 0 {
		t.Fatalf("status --root -o json exited %d: %s", code, p.err.String())
	}
	var st rootStatus
	if err := json.Unmarshal([]byte(p.out.String()), &st); err != nil {
		t.Fatalf("status --root -o json: %v", err)
	}
	if len(st.Shards) != n {
		t.Errorf("status --root -o json lists %d shards, want %d", len(st.Shards), n)
	}
	for m, c := range counts {
		if st.Members[m] != c {
			t.Errorf("status --root -o json: %s leads %d, want %d (%v)", m, st.Members[m], c, st.Members)
		}
	}
	for _, sh := range st.Shards {
		if sh.Leader == "" || sh.Token == nil {
			t.Errorf("shard %+v: want a leader and a token", sh)
		}
	}
}

func TestShardsRefusesDuplicateMember(t *testing.T) {
	root := testPath(t)
	startDaemon(t, root, "twin", 2)
	p := startProc(t, "second twin", []string{"shards", "--zk", zkc.ConnectString(), "--root", root,
		"--member", "twin", "--shards", "2", "--listen", "127.0.0.1:0"})
	if code := p.wait(20 * time.Second); code != 1 {
		t.Fatalf("second daemon with the same member id exited %d, want 1", code)
	}
	lines := strings.Split(strings.TrimRight(p.err.String(), "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "zkelect: ") || !strings.Contains(last, "already registered") {
		t.Errorf("last stderr line %q: want the duplicate member named", last)
	}
}

// TestShardsExecSupervisesOneChildPerLedShard checks --exec: one child per
// led shard with that shard's token, stopped (SIGTERM) on a handoff and on
// a graceful stop, none left behind.
func TestShardsExecSupervisesOneChildPerLedShard(t *testing.T) {
	const n = 4
	s := testSession(t)
	root, events := testPath(t), filepath.Join(t.TempDir(), "events")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exec := []string{"--exec", "exec " + shellQuote(self) + " -test.run=none {shard} {token}", "--grace", "5s"}
	m1 := startDaemonWith(t, root, "m1", n, exec, envTestChild+"="+events)
	eventually(t, 20*time.Second, "a child for each of the 4 shards", func() bool {
		return countKind(readEvents(t, events), "start") == n
	})
	o := owners(t, s, root)
	for _, e := range readEvents(t, events) {
		shard := e.fields[5]
		if e.id() != "m1" || e.fields[1] != o[shard].Token.Decimal() || e.fields[2] != o[shard].Election {
			t.Errorf("child event %v: want member m1, shard %s's token %s and election path", e, shard, o[shard].Token.Decimal())
		}
		if !strings.HasPrefix(e.fields[3], o[shard].Election+"/") { // ZKELECT_ZNODE
			t.Errorf("child event %v: ZKELECT_ZNODE %q is not a znode of shard %s's election", e, e.fields[3], shard)
		}
	}

	m2 := startDaemonWith(t, root, "m2", n, exec, envTestChild+"="+events)
	eventually(t, 30*time.Second, "a balanced handoff to m2", func() bool {
		return balanced(owners(t, s, root), n, "m1", "m2")
	})
	eventually(t, 10*time.Second, "two of m1's children stopped and two started by m2", func() bool {
		evs := readEvents(t, events)
		return countKind(evs, "stop") == 2 && countKind(evs, "start") == n+2
	})
	for _, d := range []*daemon{m1, m2} {
		d.signal(syscall.SIGTERM)
		if code := d.wait(20 * time.Second); code != 0 {
			t.Errorf("%s exited %d after SIGTERM", d.member, code)
		}
	}
	evs := readEvents(t, events)
	if starts, stops := countKind(evs, "start"), countKind(evs, "stop"); starts != stops {
		t.Errorf("%d children started, %d stopped by SIGTERM: %v", starts, stops, evs)
	}
	for _, e := range evs {
		if e.kind != "start" {
			continue
		}
		if pid, _ := strconv.Atoi(e.fields[4]); processAlive(pid) {
			t.Errorf("child %d of %s still alive", pid, e.id())
		}
	}
}

// TestShardsExecWithoutExecRunsWorkersTermHandler runs --exec with a
// template that does not exec (the shell stays the worker's parent): on a
// stop the worker still gets SIGTERM and its handler runs to completion
// within --grace, rather than being killed when the shell dies.
func TestShardsExecWithoutExecRunsWorkersTermHandler(t *testing.T) {
	const n = 2
	dir := t.TempDir()
	events, worker := filepath.Join(dir, "events"), filepath.Join(dir, "worker.sh")
	script := "#!/bin/sh\n" +
		"trap 'sleep 0.3; echo \"trapped $1\" >> " + shellQuote(events) + "; exit 0' TERM\n" +
		"echo \"started $1\" >> " + shellQuote(events) + "\n" +
		"while :; do sleep 0.05; done\n"
	if err := os.WriteFile(worker, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := startDaemonWith(t, testPath(t), "m1", n, []string{"--exec", shellQuote(worker) + " {shard}", "--grace", "5s"})
	count := func(prefix string) int {
		data, _ := os.ReadFile(events)
		return strings.Count(string(data), prefix)
	}
	eventually(t, 20*time.Second, "a worker for each shard", func() bool { return count("started ") == n })
	d.signal(syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Fatalf("daemon exited %d after SIGTERM", code)
	}
	if got := count("trapped "); got != n {
		data, _ := os.ReadFile(events)
		t.Errorf("%d of %d workers ran their TERM handler to the end:\n%s", got, n, data)
	}
	if !strings.Contains(d.err.String(), `"message":"shard child stopped"`) {
		t.Errorf("no info-level 'shard child stopped' log:\n%s", d.err.String())
	}
}

// TestPruneRemovesLeftoverShardElections: a daemon started by mistake with
// 4 shards beside one with 2 leaves elections 2 and 3; prune refuses while
// it runs, then removes exactly those and status is healthy again.
func TestPruneRemovesLeftoverShardElections(t *testing.T) {
	root := testPath(t)
	startDaemon(t, root, "m1", 2)
	wrong := startDaemon(t, root, "m2", 4)
	s := testSession(t)
	eventually(t, 20*time.Second, "4 elections, shard 3 led", func() bool {
		o := owners(t, s, root)
		return len(o) == 4 && o["3"].Member == "m2"
	})
	prune := func(extra ...string) (int, string, string) {
		p := startProc(t, "prune", append([]string{"prune", "--zk", zkc.ConnectString(), "--root", root, "--shards", "2"}, extra...))
		return p.wait(20 * time.Second), p.out.String(), p.err.String()
	}
	if code, _, errs := prune(); code != 1 || !strings.Contains(errs, "live member m2 runs another shard list (4 shards)") {
		t.Fatalf("prune while m2 runs 4 shards exited %d: %s", code, errs)
	}
	wrong.signal(syscall.SIGTERM)
	if code := wrong.wait(20 * time.Second); code != 0 {
		t.Fatalf("m2 exited %d", code)
	}
	if code, out, errs := prune("--dry-run"); code != 0 || !strings.Contains(out, "would delete the elections of 2 shards: 2, 3") {
		t.Fatalf("prune --dry-run exited %d: %s%s", code, out, errs)
	}
	if code, out, errs := prune(); code != 0 || !strings.Contains(out, "deleted the elections of 2 shards: 2, 3") {
		t.Fatalf("prune exited %d: %s%s", code, out, errs)
	}
	eventually(t, 20*time.Second, "status of the root healthy again", func() bool {
		p := startProc(t, "status", []string{"status", "--zk", zkc.ConnectString(), "--root", root})
		return p.wait(10*time.Second) == 0
	})
}

// TestShardsDefaultGraceFollowsSessionTimeout: with a short session
// timeout and no --grace, the default grace is a third of it, so the daemon
// does not warn that --grace is too long.
func TestShardsDefaultGraceFollowsSessionTimeout(t *testing.T) {
	d := startDaemonWith(t, testPath(t), "m1", 1, []string{"--session-timeout", "1500ms", "--exec", "sleep 100"})
	d.signal(syscall.SIGTERM)
	if code := d.wait(20 * time.Second); code != 0 {
		t.Fatalf("daemon exited %d", code)
	}
	if strings.Contains(d.err.String(), "--grace is above") {
		t.Errorf("default --grace warned about with a 1.5s session timeout:\n%s", d.err.String())
	}
}
