package recipe_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/zkconn"
	"github.com/zkelect/zkelect/recipe"
)

// TestOnePathErrorForRecipeAndLayer: a path the connection layer refuses
// (a read of "/a//b") and an election path the recipe refuses
// ("/zookeeper") are one error type with one sentinel, whichever of the
// two checked it.
func TestOnePathErrorForRecipeAndLayer(t *testing.T) {
	s := session(t, zkc.ConnectString())
	_, _, layerErr := s.Get(t.Context(), "/a//b")
	_, recipeErr := recipe.NewCandidate(s, "/zookeeper")
	for name, err := range map[string]error{"layer": layerErr, "recipe": recipeErr} {
		var pe *recipe.PathError
		var lpe *zkconn.PathError
		if !errors.As(err, &pe) || !errors.As(err, &lpe) || pe != lpe || !errors.Is(err, recipe.ErrInvalidPath) || !errors.Is(err, zkconn.ErrInvalidPath) {
			t.Errorf("%s's refusal %v: want one *PathError matching ErrInvalidPath of both recipe and the layer", name, err)
		}
	}
}

func TestBadInputIsATypedError(t *testing.T) {
	s := session(t, zkc.ConnectString())
	for _, p := range []string{"", "relative/path", "/", "/a/", "/a//b", "/a/./b", "/a/../b", "/zookeeper", "/zookeeper/quota", "/a\x00b",
		"/a/\U0001F600", "/a/\ufff0", "/a/\xff", "/" + strings.Repeat("a", recipe.MaxPathBytes)} {
		_, err := recipe.NewCandidate(s, p)
		var pe *recipe.PathError
		if !errors.Is(err, recipe.ErrInvalidPath) || !errors.As(err, &pe) || pe.Reason == "" {
			t.Errorf("path %.80q: %.200v, want a *PathError naming the problem", p, err)
		} else if len(err.Error()) > 200 {
			t.Errorf("path of %d bytes: the error is %d bytes long", len(p), len(err.Error()))
		}
	}
	if _, err := recipe.NewCandidate(nil, "/ok"); !errors.Is(err, recipe.ErrNilSession) {
		t.Errorf("nil session: %v", err)
	}
	if _, err := recipe.NewCandidate(s, "/ok", recipe.WithConnectionLossPolicy(recipe.TolerateSuspend(s.Timeout()))); !errors.Is(err, recipe.ErrInvalidOption) {
		t.Errorf("margin = session timeout: %v", err)
	}
	if _, err := recipe.NewCandidate(s, "/ok", recipe.WithConnectionLossPolicy(recipe.TolerateSuspend(0))); !errors.Is(err, recipe.ErrInvalidOption) {
		t.Errorf("zero margin: %v", err)
	}
	if _, err := recipe.Connect(context.Background(), nil); !errors.Is(err, recipe.ErrInvalidOption) {
		t.Errorf("no servers: %v", err)
	}
	if _, err := recipe.Connect(context.Background(), []string{zkc.ConnectString()}, recipe.WithSessionTimeout(0)); !errors.Is(err, recipe.ErrSessionTimeout) {
		t.Errorf("zero session timeout: %v", err)
	}
}

func TestSessionTimeoutTheServerCannotHonour(t *testing.T) {
	// The server grants 2..20 ticks (100ms here): 30s is out of reach.
	_, err := recipe.Connect(context.Background(), strings.Split(zkc.ConnectString(), ","),
		recipe.WithSessionTimeout(30*time.Second), recipe.WithExactSessionTimeout())
	var ste *recipe.SessionTimeoutError
	if !errors.As(err, &ste) || !errors.Is(err, recipe.ErrSessionTimeout) {
		t.Fatalf("got %v, want a *SessionTimeoutError", err)
	}
	if ste.Negotiated != 20*zkc.TickTime() {
		t.Fatalf("negotiated %v, want 20 ticks", ste.Negotiated)
	}
	// Without the option the session uses what the server granted.
	s := session(t, zkc.ConnectString(), recipe.WithSessionTimeout(30*time.Second))
	if s.Timeout() != 20*zkc.TickTime() {
		t.Fatalf("Timeout() = %v, want the negotiated %v", s.Timeout(), 20*zkc.TickTime())
	}
}

func TestUnreachableEnsembleFailsWithinConnectTimeout(t *testing.T) {
	// A port nobody listens on, and a server that accepts but never answers.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := closed.Addr().String()
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	for name, addr := range map[string]string{"closed port": deadAddr, "silent server": silent.Addr().String()} {
		start := time.Now()
		_, err := recipe.Connect(context.Background(), []string{addr}, recipe.WithConnectTimeout(700*time.Millisecond),
			recipe.WithSessionTimeout(20*time.Second))
		took := time.Since(start)
		if !errors.Is(err, recipe.ErrUnreachable) {
			t.Errorf("%s: %v, want ErrUnreachable", name, err)
		}
		t.Logf("%s: failed after %v", name, took)
		// Past the connect timeout, go-zookeeper's Close may give its
		// unanswered close request 1s (zkconn's abandon says when); anything
		// near the 20s session timeout or the 15s default means the connect
		// timeout was not what ended the wait.
		if bound := 700*time.Millisecond + time.Second + 3*time.Second; took > bound {
			t.Errorf("%s: took %v with a 700ms connect timeout (bound %v)", name, took, bound)
		}
	}
}

func TestACLDeniedIsATypedError(t *testing.T) {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	if err := raw.AddAuth("digest", []byte("owner:pw")); err != nil {
		t.Fatal(err)
	}
	ensurePath(t, raw, path[:strings.LastIndexByte(path, '/')])
	if _, err := raw.Create(path, nil, 0, zk.DigestACL(zk.PermAll, "owner", "pw")); err != nil {
		t.Fatal(err)
	}
	s := session(t, zkc.ConnectString())
	c := candidate(t, s, path)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := c.Campaign(ctx)
	if !errors.Is(err, recipe.ErrACLDenied) || !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("campaign under a foreign ACL: %v, want ErrACLDenied", err)
	}
}

func TestDigestACLProtectsCandidateZnodes(t *testing.T) {
	path := securedElection(t)
	acl := append(zk.DigestACL(zk.PermAll, "alice", "secret"), zk.WorldACL(zk.PermRead)...)
	s := session(t, zkc.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	c := candidate(t, s, path, recipe.WithACL(acl))
	l := lead(t, c)
	raw := rawConn(t, zkc.ConnectString())
	if err := raw.Delete(l.Znode(), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("delete by an unauthenticated client: %v, want ErrNoAuth", err)
	}
	if !l.Leading() {
		t.Fatalf("leadership ended: %v", l.Err())
	}
	if kids := children(t, raw, path); len(kids) != 1 {
		t.Fatalf("children %v", kids)
	}
}

func TestWaitingBehindAReadProtectedLeaderAcrossReconnects(t *testing.T) {
	// Only alice may read the znodes: after each reconnect the waiting
	// candidate's watch must be set once the session's credentials are
	// replayed, or it would never see the leader leave.
	path := securedElection(t)
	acl := zk.DigestACL(zk.PermAll, "alice", "secret")
	ls := session(t, zkc.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	p := zkc.NewProxyT(t)
	ws := session(t, p.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	l := lead(t, candidate(t, ls, path, recipe.WithACL(acl)))
	res := campaignAsync(context.Background(), candidate(t, ws, path, recipe.WithACL(acl)))
	for i := 0; i < 3; i++ {
		p.Cut()
		eventually(t, "the waiting session to reconnect", ws.Connected)
	}
	notYet(t, res, 200*time.Millisecond, "the waiting candidate led beside the leader")
	if err := l.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := awaitResult(t, res, "the waiting candidate to lead after the leader resigned"); r.err != nil {
		t.Fatal(r.err)
	}
}

func TestPathsZooKeeperAcceptsAreAccepted(t *testing.T) {
	s := session(t, zkc.ConnectString())
	base := electionPath(t)
	for _, p := range []string{base + "/é-ü", base + "/\uf900\uffef", base + "/" + strings.Repeat("b", 255)} {
		c := candidate(t, s, p)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		lead, err := c.Campaign(ctx)
		cancel()
		if err != nil {
			t.Fatalf("path %q: %v", p, err)
		}
		if lead.Token() == 0 {
			t.Fatalf("path %q: zero token", p)
		}
	}
}

func TestMalformedServerAddressFailsAtOnce(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1:x", ":2181", ""} {
		start := time.Now()
		_, err := recipe.Connect(context.Background(), []string{addr})
		var oe *recipe.OptionError
		if !errors.Is(err, recipe.ErrInvalidOption) || !errors.As(err, &oe) || oe.Option != "servers" {
			t.Errorf("server %q: %v, want a *OptionError on servers", addr, err)
		}
		// No dialling, so seconds only on a starved machine; dialling would
		// wait out the 15s DefaultConnectTimeout.
		if took, bound := time.Since(start), recipe.DefaultConnectTimeout/3; took > bound {
			t.Errorf("server %q refused after %v, want at once (bound %v)", addr, took, bound)
		}
	}
}

func TestNilOptionsAreIgnored(t *testing.T) {
	s := session(t, zkc.ConnectString(), nil)
	c := candidate(t, s, electionPath(t), nil, recipe.WithParticipantID("p"), nil)
	if c.ID() != "p" {
		t.Fatalf("ID() = %q, want the option after a nil one applied", c.ID())
	}
}

func TestEmptyParticipantIDIsRefused(t *testing.T) {
	s := session(t, zkc.ConnectString())
	if _, err := recipe.NewCandidate(s, electionPath(t), recipe.WithParticipantID("")); !errors.Is(err, recipe.ErrInvalidOption) {
		t.Fatalf("empty participant id: %v, want ErrInvalidOption", err)
	}
}
