package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ErrPostgresNotFound is returned by StartPostgresServer when no initdb and
// postgres binaries are found. The message says how to install them.
var ErrPostgresNotFound = errors.New("testenv: PostgreSQL not found in /usr/lib/postgresql/*/bin or on PATH; " +
	"on Debian/Ubuntu apt-get install postgresql (or run `make deps`)")

// postgresUser is the database superuser created by initdb; DSNs connect as it.
const postgresUser = "zkelect"

// postgresStartTimeout bounds initdb plus server start-up.
const postgresStartTimeout = 90 * time.Second

// Postgres is a throwaway PostgreSQL server: a fresh cluster in a temporary
// directory, listening on a free 127.0.0.1 port and on a unix socket inside
// that directory, with durability switched off for speed. It is the test's
// child process (in its own process group) and is killed with the test.
type Postgres struct {
	cmd    *exec.Cmd
	dir    string
	dsn    string
	exited chan struct{} // closed when the server process has exited
	log    *pgTailBuffer

	closeOnce sync.Once
	closeErr  error
}

// StartPostgres starts a throwaway PostgreSQL server for t, stops it and
// removes its files in t.Cleanup, and returns a DSN such as
// "postgres://zkelect@127.0.0.1:5433/postgres?sslmode=disable" (for the pgx
// stdlib driver, database/sql name "pgx"). It calls t.Fatal when PostgreSQL
// is missing (naming the package to install) or fails to start (with its log).
func StartPostgres(t testing.TB) (dsn string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), postgresStartTimeout)
	defer cancel()
	pg, err := StartPostgresServer(ctx)
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		if err := pg.Close(); err != nil {
			t.Errorf("stop PostgreSQL: %v", err)
		}
	})
	return pg.DSN()
}

// StartPostgresServer runs initdb and starts postgres in a new temporary
// directory; the caller must Close it. When the process runs as root, both
// run as the operating system's "postgres" user (PostgreSQL refuses to run
// as root). It returns ErrPostgresNotFound when the binaries are missing,
// ctx's error when ctx ends first, and otherwise an error carrying the tail
// of the server's log.
func StartPostgresServer(ctx context.Context) (*Postgres, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := pgCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(pgTempParent(cred), "zkelect-pg-")
	if err != nil {
		return nil, fmt.Errorf("testenv: postgres temp dir: %w", err)
	}
	if err := pgChown(dir, cred); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	pg, err := pgStartIn(ctx, bin, dir, cred)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return pg, nil
}

// DSN returns the URL to connect to the server's "postgres" database over
// TCP as the superuser, without a password or TLS.
func (p *Postgres) DSN() string { return p.dsn }

// Close stops the server at once (SIGQUIT, PostgreSQL's immediate shutdown;
// SIGKILL to the process group if it has not exited within 10s) and removes
// its directory. It is idempotent.
func (p *Postgres) Close() error {
	p.closeOnce.Do(func() {
		p.closeErr = stopChildServer("postgres", p.cmd.Process, p.exited, syscall.SIGQUIT, p.dir)
	})
	return p.closeErr
}

func pgStartIn(ctx context.Context, bin, dir string, cred *syscall.Credential) (*Postgres, error) {
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", data, "-U", postgresUser, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Env = pgEnv()
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("testenv: initdb: %w\n%s", err, out)
	}
	port, err := pgFreePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"),
		"-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	cmd.SysProcAttr = childProcAttr()
	cmd.SysProcAttr.Credential = cred
	cmd.Env = pgEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("testenv: postgres stderr: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("testenv: start postgres: %w", err)
	}
	pg := &Postgres{
		cmd:    cmd,
		dir:    dir,
		dsn:    fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", postgresUser, port),
		exited: make(chan struct{}),
		log:    &pgTailBuffer{max: 64},
	}
	ready := make(chan struct{})
	go pg.readLog(stderr, ready)
	if err := pg.awaitReady(ctx, ready); err != nil {
		_ = stopChildServer("postgres", cmd.Process, pg.exited, syscall.SIGQUIT, "")
		return nil, err
	}
	return pg, nil
}

// readLog copies the server's log into the tail buffer, closes ready at the
// line saying it accepts connections, and reaps the process at EOF.
func (p *Postgres) readLog(r interface{ Read([]byte) (int, error) }, ready chan<- struct{}) {
	sc := bufio.NewScanner(r)
	signalled := false
	for sc.Scan() {
		line := sc.Text()
		p.log.add(line)
		if !signalled && strings.Contains(line, "database system is ready to accept connections") {
			close(ready)
			signalled = true
		}
	}
	_ = p.cmd.Wait()
	close(p.exited)
}

func (p *Postgres) awaitReady(ctx context.Context, ready <-chan struct{}) error {
	select {
	case <-ready:
		return nil
	case <-p.exited:
		return fmt.Errorf("testenv: postgres exited during start-up; log:\n%s", p.log)
	case <-ctx.Done():
		return fmt.Errorf("testenv: postgres not ready: %w; log:\n%s", ctx.Err(), p.log)
	}
}

// pgBinDir returns the newest /usr/lib/postgresql/<version>/bin that
// has initdb and postgres, or else the directory of initdb on PATH.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if pgIsFile(filepath.Join(d, "initdb")) && pgIsFile(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && pgIsFile(filepath.Join(filepath.Dir(p), "postgres")) {
		return filepath.Dir(p), nil
	}
	return "", ErrPostgresNotFound
}

func pgVersion(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func pgIsFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// pgCredential returns nil when not root, else the credential of the
// "postgres" operating system user.
func pgCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("testenv: running as root needs the postgres user to run PostgreSQL "+
			"(created by apt-get install postgresql): %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("testenv: postgres user ids: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// pgTempParent returns where to create the server's directory: the usual
// temporary directory, except that as root (cred set) it must be one the
// postgres user can reach, and $TMPDIR may be private to root.
func pgTempParent(cred *syscall.Credential) string {
	if cred == nil {
		return ""
	}
	if st, err := os.Stat(os.TempDir()); err == nil && st.Mode().Perm()&0o001 != 0 && !pgUnderPrivateDir(os.TempDir()) {
		return os.TempDir()
	}
	return "/tmp"
}

// pgUnderPrivateDir reports whether some ancestor of dir is not searchable
// by other users.
func pgUnderPrivateDir(dir string) bool {
	for d := filepath.Dir(filepath.Clean(dir)); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err != nil || st.Mode().Perm()&0o001 == 0 {
			return true
		}
		if d == "/" || d == "." {
			return false
		}
	}
}

func pgChown(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("testenv: chown postgres dir: %w", err)
	}
	return nil
}

func pgEnv() []string {
	return []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C", "TZ=UTC"}
}

func pgFreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testenv: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// pgTailBuffer keeps the last max lines of a log, safe for concurrent use.
type pgTailBuffer struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (b *pgTailBuffer) add(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, line)
	if len(b.lines) > b.max {
		b.lines = b.lines[len(b.lines)-b.max:]
	}
}

// String returns the kept lines joined by newlines.
func (b *pgTailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}
