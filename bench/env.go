package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// Machine describes the host a report was measured on.
type Machine struct {
	CPU  string `json:"cpu"`
	CPUs int    `json:"cpus"`
	OS   string `json:"os"`
	Go   string `json:"go"`
}

// ThisMachine reads the CPU model from /proc/cpuinfo (where present).
func ThisMachine() Machine {
	m := Machine{CPU: "unknown", CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			m.CPU = strings.TrimSpace(v)
			break
		}
	}
	return m
}

// env is what every scenario runs on: the ensemble and the session timeout
// candidates ask for.
type env struct {
	cluster        *testenv.Cluster
	sessionTimeout time.Duration
	maxHandoffs    int // the partition members' MaxConcurrentHandoffs; 0: the default
	logf           func(format string, args ...any)
	raw            *floors // measured once, by the first scenario that needs them
	shardIDs       string  // Config.ShardIDs
	stepLimit      time.Duration
}

// quietLogger silences go-zookeeper's connection chatter.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// rawConn opens a plain go-zookeeper connection to every server and waits
// until it has a session, bounded by ctx.
func (e *env) rawConn(ctx context.Context) (*zk.Conn, error) {
	// The raw sessions ask for twice the candidates' timeout (servers cap
	// it at 20 ticks): a floor measurement must not die of a slow machine.
	return e.rawConnTo(ctx, e.cluster.Addrs(), 2*e.sessionTimeout)
}

// rawConnTo opens a plain go-zookeeper connection to servers asking for
// timeout and waits until it has a session, bounded by ctx.
func (e *env) rawConnTo(ctx context.Context, servers []string, timeout time.Duration) (*zk.Conn, error) {
	ready := make(chan struct{})
	var once sync.Once
	onEvent := func(ev zk.Event) {
		if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
			once.Do(func() { close(ready) })
		}
	}
	conn, _, err := zk.Connect(servers, timeout,
		zk.WithLogger(quietLogger{}), zk.WithEventCallback(onEvent))
	if err != nil {
		return nil, fmt.Errorf("bench: connect: %w", err)
	}
	select {
	case <-ready:
		return conn, nil
	case <-ctx.Done():
		conn.Close()
		return nil, fmt.Errorf("bench: waiting for a session: %w", ctx.Err())
	}
}

// session opens a recipe session on servers (the cluster's when nil),
// with opts after the env's session timeout.
func (e *env) session(ctx context.Context, servers []string, opts ...recipe.SessionOption) (*recipe.Session, error) {
	if servers == nil {
		servers = e.cluster.Addrs()
	}
	opts = append([]recipe.SessionOption{recipe.WithSessionTimeout(e.sessionTimeout)}, opts...)
	s, err := recipe.Connect(ctx, servers, opts...)
	if err != nil {
		return nil, fmt.Errorf("bench: recipe session: %w", err)
	}
	return s, nil
}

// ensurePath creates path and its parents as persistent znodes.
func ensurePath(conn *zk.Conn, path string) error {
	cur := ""
	for _, part := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		cur += "/" + part
		_, err := conn.Create(cur, nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && err != zk.ErrNodeExists {
			return fmt.Errorf("bench: create %s: %w", cur, err)
		}
	}
	return nil
}
