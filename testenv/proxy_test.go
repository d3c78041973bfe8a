package testenv_test

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/testenv"
)

func TestBlackholedClientSessionIsExpiredByServer(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	p := c.NewProxyT(t)
	victim := connect(t, p.ConnectString(), time.Second)
	observer := connect(t, c.ConnectString(), 10*time.Second)
	victim.mustCreate(t, "/victim", zk.FlagEphemeral)

	p.Blackhole()
	observer.waitDeleted(t, "/victim")

	p.Heal()
	victim.waitState(t, zk.StateExpired)
}

func TestCutKeepsTheSession(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	p := c.NewProxyT(t)
	cl := connect(t, p.ConnectString(), 2*time.Second)
	cl.mustCreate(t, "/kept", zk.FlagEphemeral)

	p.Cut()
	cl.waitState(t, zk.StateDisconnected)
	cl.waitState(t, zk.StateHasSession)

	if ok, _, err := cl.Exists("/kept"); err != nil || !ok {
		t.Fatalf("exists /kept after reconnect = %v, %v; want the session's znode", ok, err)
	}
	s := p.Sessions()
	if len(s) != 2 || s[0].ID != s[1].ID || s[0].ID != cl.SessionID() {
		t.Fatalf("Sessions() = %+v, want the same session %x twice", s, cl.SessionID())
	}
}

func TestCutAfterCreateAppliesItButLosesTheReply(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	p := c.NewProxyT(t)
	cl := connect(t, p.ConnectString(), 2*time.Second)
	observer := connect(t, c.ConnectString(), 2*time.Second)

	fired := p.CutAfterRequest(testenv.OpCreate)
	_, err := cl.Create("/applied", nil, 0, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("create through the cut = %v, want connection loss (%v)", err, zk.ErrConnectionClosed)
	}
	select {
	case <-fired:
	case <-time.After(waitTimeout):
		t.Fatal("CutAfterRequest's channel not closed after the cut")
	}
	if ok, _, err := observer.Exists("/applied"); err != nil || !ok {
		t.Fatalf("exists /applied = %v, %v; the server should have applied the create", ok, err)
	}
	// Only the next create is cut: the client reconnects and works.
	cl.waitState(t, zk.StateHasSession)
	cl.mustCreate(t, "/after", 0)
}

func TestLatencyDelaysReplies(t *testing.T) {
	const latency = 300 * time.Millisecond
	c := testenv.New(t, testenv.Options{})
	p := c.NewProxyT(t)
	cl := connect(t, p.ConnectString(), 2*time.Second)

	p.SetLatency(latency)
	begin := time.Now()
	if _, _, err := cl.Exists("/"); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(begin); rtt < latency {
		t.Fatalf("round trip with %v latency took %v", latency, rtt)
	}
	p.Heal()
	if _, _, err := cl.Exists("/"); err != nil {
		t.Fatalf("exists after Heal: %v", err)
	}
}

func TestRequestLatencyDelaysRequests(t *testing.T) {
	const latency = 300 * time.Millisecond
	c := testenv.New(t, testenv.Options{})
	p := c.NewProxyT(t)
	cl := connect(t, p.ConnectString(), 2*time.Second)
	observer := connect(t, c.ConnectString(), 2*time.Second)

	p.SetRequestLatency(latency)
	done := make(chan error, 1)
	begin := time.Now()
	go func() {
		_, err := cl.Create("/delayed", nil, 0, zk.WorldACL(zk.PermAll))
		done <- err
	}()
	// Half way, the server has not seen the request yet.
	time.Sleep(latency / 2)
	if ok, _, err := observer.Exists("/delayed"); err != nil || ok {
		t.Fatalf("exists /delayed half way through the request latency = %v, %v; want false", ok, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(begin); rtt < latency {
		t.Fatalf("round trip with %v request latency took %v", latency, rtt)
	}
	p.Heal()
	if _, _, err := cl.Exists("/"); err != nil {
		t.Fatalf("exists after Heal: %v", err)
	}
}

func TestExpireConnEndsTheSession(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	victim := connect(t, c.ConnectString(), 2*time.Second)
	observer := connect(t, c.ConnectString(), 2*time.Second)
	victim.mustCreate(t, "/expired", zk.FlagEphemeral)

	if err := testenv.ExpireConn(testContext(t), c.Addrs(), victim.Conn); err != nil {
		t.Fatal(err)
	}
	observer.waitDeleted(t, "/expired")
	victim.waitState(t, zk.StateExpired)

	err := testenv.ExpireConn(testContext(t), c.Addrs(), victim.Conn)
	if !errors.Is(err, testenv.ErrNoSession) {
		t.Fatalf("expiring an expired session: %v, want ErrNoSession", err)
	}
}

func TestExpireSessionWithCredentialsSeenByProxy(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	p := c.NewProxyT(t)
	victim := connect(t, p.ConnectString(), 2*time.Second)
	victim.mustCreate(t, "/expired", zk.FlagEphemeral)

	s := p.Sessions()
	if len(s) != 1 || s[0].ID != victim.SessionID() || len(s[0].Password) == 0 {
		t.Fatalf("Sessions() = %+v, want session %x with a password", s, victim.SessionID())
	}
	if err := testenv.ExpireSession(testContext(t), c.Addrs(), s[0].ID, s[0].Password); err != nil {
		t.Fatal(err)
	}
	victim.waitState(t, zk.StateExpired)
}

func TestLatencyCountsFromEachReplysArrival(t *testing.T) {
	const (
		latency  = 500 * time.Millisecond
		requests = 20
	)
	c := testenv.New(t, testenv.Options{})
	p := c.NewProxyT(t)
	cl := connect(t, p.ConnectString(), 2*time.Second)

	p.SetLatency(latency)
	begin := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, requests)
	for range requests {
		wg.Go(func() {
			_, _, err := cl.Exists("/")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Serialised delays would take requests*latency (10s); 3s past one
	// latency is for a loaded machine.
	took := time.Since(begin)
	if took < latency || took > latency+3*time.Second {
		t.Fatalf("%d concurrent requests with %v latency took %v, want about %v", requests, latency, took, latency)
	}
	t.Logf("%d concurrent requests with %v latency took %v", requests, latency, took)
}

func TestCloseReleasesBlackholedConnections(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	p, err := c.NewProxy()
	if err != nil {
		t.Fatal(err)
	}
	p.Blackhole()
	conn, err := net.Dial("tcp", p.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(waitTimeout)); err != nil {
		t.Fatal(err)
	}
	// EOF, or a reset when Close shut the listener before accepting.
	var ne net.Error
	if _, err := conn.Read(make([]byte, 1)); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("read from a connection of a closed proxy = %v, want it closed", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestDialerRoutesThroughTheProxy(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	p := c.NewProxyT(t)
	cl := connectVia(t, c.ConnectString(), 2*time.Second, p.Dialer())
	if n := len(p.Sessions()); n != 1 {
		t.Fatalf("proxy saw %d sessions, want the client's", n)
	}
	p.Cut()
	cl.waitState(t, zk.StateDisconnected)
	cl.waitState(t, zk.StateHasSession)
}

func TestForwardOnlyPingsKeepsTheConnectionButAnswersNothing(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	p := c.NewProxyT(t)
	cl := connect(t, p.ConnectString(), time.Second)
	cl.mustCreate(t, "/zombie", 0)
	if err := p.ForwardOnlyPings(1); !errors.Is(err, testenv.ErrBadOptions) {
		t.Fatalf("ForwardOnlyPings(1) on one server: %v, want ErrBadOptions", err)
	}
	if err := p.ForwardOnlyPings(0); err != nil {
		t.Fatal(err)
	}
	answered := make(chan error, 1)
	go func() { _, _, err := cl.Exists("/zombie"); answered <- err }()
	// Two session timeouts: pings keep the connection (and the session)
	// while the request goes unanswered.
	select {
	case err := <-answered:
		t.Fatalf("a request was answered (%v) while the server forwards only pings", err)
	case <-time.After(2 * time.Second):
	}
	if st := cl.State(); st != zk.StateHasSession {
		t.Fatalf("state %v after two session timeouts of pings, want the session kept", st)
	}
	p.Heal()
	if ok, _, err := cl.Exists("/zombie"); err != nil || !ok {
		t.Fatalf("exists after Heal: %v, %v", ok, err)
	}
}
