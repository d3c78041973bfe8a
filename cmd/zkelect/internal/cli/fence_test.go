package cli

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/zxidfence"
)

func TestFenceAcceptGenerationAdmitsRebuiltEnsembleOnZooKeeper(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := testSession(t)
	dir := testPath(t)
	if err := fenceCreatePath(s.Conn(), dir); err != nil {
		t.Fatal(err)
	}
	target := dir + "/ledger"
	g, err := zxidfence.NewZooKeeper(s.Conn())
	if err != nil {
		t.Fatal(err)
	}
	old := zxidfence.Leader{Znode: dir, Version: -1, Fence: zxidfence.At(zxidfence.NewToken(5, 100))}
	if err := g.Write(ctx, target, old, []byte("v")); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "fence accept-generation", []string{"fence", "accept-generation", "--zk", zkc.ConnectString(),
		"--target", target, "--generation", "1", "--reason", "rebuilt after disk loss"})
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("accept-generation exited %d: %s", code, p.err.String())
	}
	if out := p.out.String(); !strings.Contains(out, "generation 1 accepted (was generation 0, token 0x500000064 (5:100))") {
		t.Fatalf("stdout %q does not report the change", out)
	}
	if log := p.err.String(); !strings.Contains(log, "fencing generation accepted") || !strings.Contains(log, "rebuilt after disk loss") {
		t.Fatalf("stderr %q does not log the change with its reason", log)
	}
	if err := g.Write(ctx, target, old, nil); !errors.Is(err, zxidfence.ErrStaleToken) {
		t.Fatalf("old generation's leader after the change: %v; want ErrStaleToken", err)
	}
	show := startProc(t, "fence show", []string{"fence", "show", "--zk", zkc.ConnectString(), "--target", target})
	if code := show.wait(30 * time.Second); code != 0 || !strings.Contains(show.out.String(), "generation 1, token 0x0 (0:0)") {
		t.Fatalf("fence show exited %d: %q %q", code, show.out.String(), show.err.String())
	}
}

func TestFenceAcceptGenerationOnSQLite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := "file:" + filepath.Join(t.TempDir(), "app.db") + "?_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g, err := zxidfence.NewSQL(db, zxidfence.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Write(ctx, "shard-3", zxidfence.At(77), []byte("v")); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "fence accept-generation", []string{"fence", "accept-generation", "--sql", "sqlite", "--dsn", dsn,
		"--key", "shard-3", "--generation", "2", "--reason", "INC-42"})
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("accept-generation exited %d: %s", code, p.err.String())
	}
	if h, err := g.Highest(ctx, "shard-3"); err != nil || h != (zxidfence.Fence{Generation: 2}) {
		t.Fatalf("Highest after accept-generation = %s, %v; want generation 2", h, err)
	}
}

func TestFenceAcceptGenerationRefusesBadInput(t *testing.T) {
	for name, args := range map[string][]string{
		"no reason":     {"--target", "/x", "--generation", "1"},
		"no generation": {"--target", "/x", "--reason", "r"},
		"no resource":   {"--generation", "1", "--reason", "r"},
		"bad dialect":   {"--sql", "oracle", "--dsn", "x", "--key", "k", "--generation", "1", "--reason", "r"},
		"sql no key":    {"--sql", "sqlite", "--dsn", "file:x", "--generation", "1", "--reason", "r"},
	} {
		p := startProc(t, "fence accept-generation", append([]string{"fence", "accept-generation"}, args...))
		if code := p.wait(30 * time.Second); code == 0 || !strings.Contains(p.err.String(), "--") {
			t.Errorf("%s: exit %d, stderr %q; want a non-zero exit naming the flag", name, code, p.err.String())
		}
	}
}

// fenceCreatePath creates p and its ancestors as persistent znodes.
func fenceCreatePath(conn *zk.Conn, p string) error {
	parts := strings.Split(p[1:], "/")
	for i := range parts {
		q := "/" + strings.Join(parts[:i+1], "/")
		if _, err := conn.Create(q, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// TestFenceGivesUpOnSilentDatabase: a database that accepts the connection
// and never answers once held `zkelect fence` forever; it must give up
// within --timeout (and at SIGINT) with one line on stderr. A refused
// connection, which the driver reports on several lines, is one line too.
func TestFenceGivesUpOnSilentDatabase(t *testing.T) {
	silent, accepted := silentListener(t)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"silent show": {[]string{"fence", "show", "--sql", "postgres", "--dsn", "postgres://u@" + silent + "/db",
			"--key", "k", "--timeout", "1s"}, "no answer within --timeout 1s"},
		"silent accept": {[]string{"fence", "accept-generation", "--sql", "postgres", "--dsn", "postgres://u@" + silent + "/db",
			"--key", "k", "--generation", "1", "--reason", "r", "--timeout", "1s"}, "no answer within --timeout 1s"},
		"refused": {[]string{"fence", "show", "--sql", "postgres", "--dsn", "postgres://u@127.0.0.1:1/db",
			"--key", "k"}, "connection refused"},
		"bad timeout": {[]string{"fence", "show", "--target", "/x", "--timeout", "0s"}, "invalid --timeout 0s"},
	} {
		t.Run(name, func(t *testing.T) {
			p := startProc(t, name, tc.args)
			code := p.wait(10 * time.Second)
			stderr := p.err.String()
			if lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n"); code != 1 || len(lines) != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and one line containing %q", code, stderr, tc.want)
			}
		})
	}
	t.Run("SIGINT", func(t *testing.T) {
		p := startProc(t, "silent show", []string{"fence", "show", "--sql", "postgres",
			"--dsn", "postgres://u@" + silent + "/db", "--key", "k", "--timeout", "1m"})
		before := accepted()
		eventually(t, 10*time.Second, "fence show to connect to the silent database", func() bool {
			return accepted() > before
		})
		p.signal(syscall.SIGINT)
		if code := p.wait(10 * time.Second); code != 1 || !strings.Contains(p.err.String(), "interrupted") {
			t.Errorf("exit %d, stderr %q; want exit 1, interrupted", code, p.err.String())
		}
	})
}

// silentListener accepts connections and never answers, until cleanup. It
// returns its address and a count of the connections accepted so far.
func silentListener(t *testing.T) (string, func() int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				break
			}
			conns = append(conns, c)
			n.Add(1)
		}
		for _, c := range conns {
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().String(), n.Load
}

// TestFenceMessagesNameTheRealProblem: each of these once printed a
// misleading or raw message (the target reported missing instead of its
// parent; "missing --generation" for 0; a bare "no such table"; --target
// silently ignored next to --sql).
func TestFenceMessagesNameTheRealProblem(t *testing.T) {
	dir := testPath(t) // never created: the target's parent is missing
	fresh := "file:" + filepath.Join(t.TempDir(), "fresh.db")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"missing parent": {[]string{"accept-generation", "--zk", zkc.ConnectString(), "--target", dir + "/t",
			"--generation", "1", "--reason", "r"}, "parent znode " + dir + " does not exist"},
		"generation 0": {[]string{"accept-generation", "--target", "/x", "--generation", "0", "--reason", "r"},
			"invalid --generation 0: every resource starts in generation 0"},
		"fresh database": {[]string{"show", "--sql", "sqlite", "--dsn", fresh, "--key", "k"},
			"table zxidfence does not exist in this database: the application creates it"},
		"fresh database accept": {[]string{"accept-generation", "--sql", "sqlite", "--dsn", fresh, "--key", "k",
			"--generation", "1", "--reason", "r"}, "table zxidfence does not exist"},
		"target and sql": {[]string{"show", "--zk", zkc.ConnectString(), "--target", "/x", "--sql", "sqlite",
			"--dsn", fresh, "--key", "k"}, "pass one resource, not both"},
	} {
		t.Run(name, func(t *testing.T) {
			p := startProc(t, name, append([]string{"fence"}, tc.args...))
			code := p.wait(30 * time.Second)
			stderr := p.err.String()
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if last := lines[len(lines)-1]; code != 1 || !strings.HasPrefix(last, "zkelect: ") || !strings.Contains(last, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and a last line containing %q", code, stderr, tc.want)
			}
		})
	}
}
