package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	// DefaultTickTime is ZooKeeper's tickTime when Options.TickTime is zero.
	// Sessions may then last 200 ms to 2 s (2 to 20 ticks).
	DefaultTickTime = 100 * time.Millisecond

	// MinTickTime is the smallest Options.TickTime Start accepts.
	MinTickTime = 10 * time.Millisecond

	// defaultStartTimeout bounds Start when its context has no deadline.
	defaultStartTimeout = 2 * time.Minute

	// startAttempts is how often Start picks new ports after another
	// process took one of them first.
	startAttempts = 3
)

// Options configure a Cluster. The zero value is a standalone server with a
// 100 ms tick.
type Options struct {
	// Servers is the number of servers: 1 (the default) runs a standalone
	// server, 3 or 5 an ensemble. At most 9.
	Servers int

	// TickTime is ZooKeeper's basic time unit (heartbeats; session
	// timeouts default to 2..20 ticks). Default DefaultTickTime; at least
	// MinTickTime, whole milliseconds.
	TickTime time.Duration

	// MinSessionTimeout and MaxSessionTimeout bound the session timeouts
	// the servers negotiate. Zero keeps ZooKeeper's defaults of 2 and 20
	// ticks. Whole milliseconds.
	// MaxSessionTimeout must be at least the minimum (MinSessionTimeout, or
	// its default of 2 ticks), else ZooKeeper refuses to start.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration

	// Heap is each server's maximum Java heap (-Xmx) in Java's notation: a
	// number of bytes with an optional k, m or g suffix, such as "512m".
	// Default DefaultHeap; at least 32m.
	Heap string

	// JuteMaxBuffer sets every server's jute.maxbuffer (-Djute.maxbuffer),
	// in bytes: the largest request and znode it accepts and, with as much
	// again, the largest transaction it reads back from a peer or its
	// log. Zero keeps ZooKeeper's default (1,048,575); at least 4096.
	// Lower it to make size limits bite at test scale.
	JuteMaxBuffer int

	// SystemProperties are Java system properties given to every server's
	// JVM (-Dkey=value), after testenv's own, so they override them: for
	// example "zookeeper.request_throttle_max_requests" to make a server
	// throttle (ZooKeeper's administrator's guide lists the properties).
	// Keys must be non-empty without "=" or white space.
	SystemProperties map[string]string

	// Dir is where the cluster's temporary directory (data, configuration,
	// logs) is created; default os.TempDir(). Close removes the directory.
	Dir string

	// TLS, when set, gives every server a secure client port too (see
	// TLSOptions, Cluster.SecureAddrs and Cluster.TLSFiles).
	TLS *TLSOptions

	// SASLUsers, when not empty, makes the servers accept SASL DIGEST-MD5
	// logins (ZooKeeper's SASLAuthenticationProvider) of these users, user
	// name to password, written to a JAAS DigestLoginModule Server section.
	// A logged-in client's ACL id is sasl:<user>.
	SASLUsers map[string]string

	// SASLRequired makes the servers refuse every request of a session
	// that has not logged in with SASL (ZooKeeper's
	// sessionRequireClientSASLAuth: the answer is
	// SESSIONCLOSEDREQUIRESASLAUTH, -124, and the connection is closed).
	// It needs SASLUsers.
	SASLRequired bool

	// SyncLimit is ZooKeeper's syncLimit, in ticks: how long a follower
	// waits for its quorum leader (and the leader for a follower) before
	// it gives up the link. Default 10; at most 1000.
	SyncLimit int

	// QuorumRelays puts every server's links to the other servers' quorum
	// ports (a follower's link to the quorum leader) through relays on
	// loopback that SilenceQuorum can silence, while the server keeps
	// serving its clients. Leader election traffic stays direct.
	QuorumRelays bool

	// DynamicConfig starts the servers with ZooKeeper's dynamic
	// configuration (3.5+: reconfigEnabled=true, the members in a
	// dynamicConfigFile, each server line with its client address), so
	// Reconfig and Join change the ensemble at run time and
	// /zookeeper/config names every member's client address. A superuser
	// of the cluster's own (a digest of a random password) makes the
	// reconfig requests. Not with QuorumRelays.
	DynamicConfig bool

	// SpareServers, with DynamicConfig, are servers beyond Servers that
	// get their ports and directory at Start but are neither started nor
	// members: Join starts one and adds it to the ensemble. They take the
	// indices Servers..Servers+SpareServers-1 (Addrs lists them too).
	// Servers plus SpareServers is at most 9.
	SpareServers int

	// Logf, when set, receives one line per lifecycle event (server
	// started, killed, paused...). New uses t.Logf when it is nil.
	Logf func(format string, args ...any)
}

// Validate returns the error Start would return for o's fields (an
// *OptionsError naming the field, wrapping ErrBadOptions), or nil. It
// starts nothing.
func (o Options) Validate() error {
	_, err := o.withDefaults()
	return err
}

// withDefaults validates o and fills in defaults; errors are *OptionsError.
func (o Options) withDefaults() (Options, error) {
	if o.Servers == 0 {
		o.Servers = 1
	}
	if o.TickTime == 0 {
		o.TickTime = DefaultTickTime
	}
	if o.Heap == "" {
		o.Heap = DefaultHeap
	}
	if o.SyncLimit == 0 {
		o.SyncLimit = syncLimitTicks
	}
	if err := checkHeap(o.Heap); err != nil {
		return o, err
	}
	if err := o.checkNumbers(); err != nil {
		return o, err
	}
	if err := o.checkSecurity(); err != nil {
		return o, err
	}
	if err := o.checkProperties(); err != nil {
		return o, err
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o, nil
}

// checkNumbers validates o's sizes and times, defaults filled in.
func (o Options) checkNumbers() error {
	bad := func(field string, v any, reason string) error {
		return &OptionsError{Field: field, Value: v, Reason: reason}
	}
	const whole = "want whole milliseconds, or 0 for ZooKeeper's default"
	switch {
	case o.Servers < 1 || o.Servers > 9:
		return bad("Servers", o.Servers, "want 1..9")
	case o.SpareServers < 0 || o.Servers+o.SpareServers > 9 || (o.SpareServers > 0 && !o.DynamicConfig):
		return bad("SpareServers", o.SpareServers, "want 0, or with DynamicConfig at most 9 servers in all")
	case o.DynamicConfig && o.QuorumRelays:
		return bad("QuorumRelays", o.QuorumRelays, "not with DynamicConfig")
	case o.TickTime < MinTickTime || o.TickTime%time.Millisecond != 0:
		return bad("TickTime", o.TickTime, fmt.Sprintf("want whole milliseconds, at least %v", MinTickTime))
	case o.SyncLimit < 1 || o.SyncLimit > 1000:
		return bad("SyncLimit", o.SyncLimit, "want 1..1000 ticks, or 0 for 10")
	case o.MinSessionTimeout < 0 || o.MinSessionTimeout%time.Millisecond != 0:
		return bad("MinSessionTimeout", o.MinSessionTimeout, whole+" (2 ticks)")
	case o.MaxSessionTimeout < 0 || o.MaxSessionTimeout%time.Millisecond != 0:
		return bad("MaxSessionTimeout", o.MaxSessionTimeout, whole+" (20 ticks)")
	case o.JuteMaxBuffer != 0 && o.JuteMaxBuffer < 4096:
		return bad("JuteMaxBuffer", o.JuteMaxBuffer, "want at least 4096 bytes, or 0 for ZooKeeper's default")
	case o.MaxSessionTimeout > 0 && o.minSessionTimeout() > o.MaxSessionTimeout:
		return bad("MaxSessionTimeout", o.MaxSessionTimeout,
			fmt.Sprintf("ZooKeeper wants at least its minimum session timeout, %v", o.minSessionTimeout()))
	}
	return nil
}

// checkSecurity validates o's TLS and SASL fields, filling in the client
// certificate policy.
func (o *Options) checkSecurity() error {
	if o.TLS != nil {
		t := *o.TLS
		if t.ClientAuth == "" {
			t.ClientAuth = ClientAuthWant
		}
		switch t.ClientAuth {
		case ClientAuthWant, ClientAuthNeed, ClientAuthNone:
		default:
			return &OptionsError{Field: "TLS.ClientAuth", Value: t.ClientAuth, Reason: "want want, need or none"}
		}
		for _, n := range t.Names {
			if n == "" || strings.ContainsAny(n, ", \t\n=:") {
				return &OptionsError{Field: "TLS.Names", Value: n, Reason: "want DNS names"}
			}
		}
		t.Names = slices.Clone(t.Names)
		o.TLS = &t
	}
	if o.SASLRequired && len(o.SASLUsers) == 0 {
		return &OptionsError{Field: "SASLRequired", Value: "true", Reason: "needs SASLUsers"}
	}
	return checkSASLUsers(o.SASLUsers)
}

// minSessionTimeout is the lowest session timeout the servers negotiate:
// MinSessionTimeout, or ZooKeeper's default of 2 ticks.
func (o Options) minSessionTimeout() time.Duration {
	if o.MinSessionTimeout > 0 {
		return o.MinSessionTimeout
	}
	return 2 * o.TickTime
}

// Cluster is a running standalone ZooKeeper server or ensemble on loopback.
// Its methods are safe for concurrent use. Close it to stop every process
// it started.
type Cluster struct {
	opts    Options
	inst    installation
	dir     string
	servers []*server
	tls     *tlsMaterial  // nil without Options.TLS
	relays  *quorumRelays // nil unless Options.QuorumRelays
	super   string        // the superuser's password with Options.DynamicConfig (reconfig.go)

	mu      sync.Mutex
	members []int // the ensemble's members, by index (reconfig.go)

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
}

// Start starts opts.Servers ZooKeeper servers and returns once all of them
// serve clients (for an ensemble: once a quorum leader exists). ctx bounds
// the start-up (2 minutes when it has no deadline). It returns
// ErrJavaNotFound or ErrZooKeeperNotFound when the software is missing, and
// retries with new ports when another process took one first. The caller
// must Close the cluster.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	inst, err := findInstallation()
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	for attempt := 1; ; attempt++ {
		c, err := tryStart(ctx, opts, inst)
		if err == nil || !errors.Is(err, errPortTaken) || attempt == startAttempts {
			return c, err
		}
		opts.Logf("testenv: a port was taken, retrying with new ports: %v", err)
	}
}

// errPortTaken marks a start-up that failed because a port was taken.
var errPortTaken = errors.New("port already in use")

// bindFailure is how a JVM's log reports a port taken by another process.
const bindFailure = "Address already in use"

// tryStart makes one attempt at starting the cluster on fresh ports.
func tryStart(ctx context.Context, opts Options, inst installation) (*Cluster, error) {
	dir, err := os.MkdirTemp(opts.Dir, "zkelect-testenv-")
	if err != nil {
		return nil, fmt.Errorf("create cluster dir: %w", err)
	}
	c := &Cluster{opts: opts, inst: inst, dir: dir, closed: make(chan struct{})}
	if err := c.configure(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	begin := time.Now()
	for _, s := range c.servers[:opts.Servers] {
		if err := s.start(inst); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	if err := c.awaitServing(ctx, c.indices()[:opts.Servers], true); err != nil {
		err = fmt.Errorf("start %d ZooKeeper server(s): %w\n%s", len(c.servers), err, c.LogTail(15))
		_ = c.Close()
		return nil, err
	}
	opts.Logf("testenv: %d ZooKeeper server(s) serving at %s after %v (tickTime %v, dir %s)",
		len(c.servers), c.ConnectString(), time.Since(begin).Round(time.Millisecond), opts.TickTime, dir)
	return c, nil
}

// configure makes the cluster's TLS and SASL files, picks ports and writes
// every server's configuration.
func (c *Cluster) configure(ctx context.Context) error {
	sec, err := c.security(ctx)
	if err != nil {
		return err
	}
	if err := c.makeSuperuser(); err != nil {
		return err
	}
	n, per := c.opts.Servers+c.opts.SpareServers, 4
	ports, err := freePorts(per * n)
	if err != nil {
		return err
	}
	for i := range n {
		s := &server{
			index:         i,
			dir:           filepath.Join(c.dir, fmt.Sprintf("server-%d", i)),
			clientPort:    ports[per*i],
			quorumPort:    ports[per*i+1],
			electionPort:  ports[per*i+2],
			heap:          c.opts.Heap,
			props:         c.opts.systemProperties(),
			security:      sec,
			juteMaxBuffer: c.opts.JuteMaxBuffer,
		}
		if sec.tls != nil {
			s.securePort = ports[per*i+3]
		}
		c.servers = append(c.servers, s)
	}
	peerPort := func(from, to *server) int { return to.quorumPort }
	if c.opts.QuorumRelays && n > 1 {
		if c.relays, err = newQuorumRelays(c.servers); err != nil {
			return err
		}
		peerPort = func(from, to *server) int { return c.relays.port(from.index, to.index) }
	}
	members := c.servers[:c.opts.Servers]
	for _, s := range members {
		if err := writeConfig(s, members, c.opts, peerPort); err != nil {
			return fmt.Errorf("configure server %d: %w", s.index, err)
		}
	}
	c.members = c.indices()[:c.opts.Servers]
	return nil
}

// security makes what Options.TLS and Options.SASLUsers ask for.
func (c *Cluster) security(ctx context.Context) (serverSecurity, error) {
	var sec serverSecurity
	if c.opts.TLS != nil {
		m, err := makeTLS(ctx, filepath.Join(c.dir, "tls"), c.inst.java, c.opts.TLS.Names)
		if err != nil {
			return sec, fmt.Errorf("make TLS keystores: %w", err)
		}
		c.tls = &m
		sec.tls, sec.clientAuth = &m, c.opts.TLS.ClientAuth
	}
	if len(c.opts.SASLUsers) > 0 {
		path, err := writeJAAS(c.dir, c.opts.SASLUsers)
		if err != nil {
			return sec, err
		}
		sec.jaas, sec.saslRequired = path, c.opts.SASLRequired
	}
	return sec, nil
}

// SecureAddrs returns each server's secure client address
// ("127.0.0.1:port", TLS only), indexed by server index, or nil when the
// cluster was started without Options.TLS.
func (c *Cluster) SecureAddrs() []string {
	if c.tls == nil {
		return nil
	}
	addrs := make([]string, len(c.servers))
	for i, s := range c.servers {
		addrs[i] = s.secureAddr()
	}
	return addrs
}

// TLSFiles returns the client-side CA, certificate and key files of a
// cluster started with Options.TLS; ok is false without it.
func (c *Cluster) TLSFiles() (files TLSFiles, ok bool) {
	if c.tls == nil {
		return TLSFiles{}, false
	}
	return c.tls.client, true
}

// ConnectString returns the servers' client addresses, comma-separated, as
// ZooKeeper clients expect them ("127.0.0.1:p1,127.0.0.1:p2,...").
func (c *Cluster) ConnectString() string { return strings.Join(c.Addrs(), ",") }

// Addrs returns each server's client address ("127.0.0.1:port"), indexed
// by server index 0..n-1. A server keeps its address across restarts.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.servers))
	for i, s := range c.servers {
		addrs[i] = s.addr()
	}
	return addrs
}

// TickTime returns the servers' tickTime.
func (c *Cluster) TickTime() time.Duration { return c.opts.TickTime }

// Size returns the number of servers.
func (c *Cluster) Size() int { return len(c.servers) }

// Dir returns the cluster's directory: one server-<i> subdirectory per
// server with its zoo.cfg, data and zookeeper.log. Close removes it.
func (c *Cluster) Dir() string { return c.dir }

// PID returns the process id of server i's JVM (also its process group id),
// or 0 when it is not running or i is out of range.
func (c *Cluster) PID(i int) int {
	if i < 0 || i >= len(c.servers) {
		return 0
	}
	return c.servers[i].pid()
}

// LogPath returns the path of server i's log file (kept until Close), or ""
// when i is out of range.
func (c *Cluster) LogPath(i int) string {
	if i < 0 || i >= len(c.servers) {
		return ""
	}
	return c.servers[i].logPath()
}

// LogTail returns the last n lines of every server's log, each under a
// header naming the server.
func (c *Cluster) LogTail(n int) string {
	var b strings.Builder
	for _, s := range c.servers {
		fmt.Fprintf(&b, "--- ZooKeeper server %d (%s) log tail ---\n%s\n", s.index, s.addr(), s.logTail(n))
	}
	return b.String()
}

// Close kills every server process (SIGKILL to each process group), waits
// for them to exit and removes the cluster's directory. It is idempotent and
// safe to call concurrently; later calls return the first call's result.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		for _, s := range c.servers {
			if err := s.retire(); err == nil {
				c.opts.Logf("testenv: killed server %d", s.index)
			}
		}
		if c.relays != nil {
			c.closeErr = c.relays.close()
		}
		if err := os.RemoveAll(c.dir); err != nil {
			c.closeErr = errors.Join(c.closeErr, fmt.Errorf("remove cluster dir: %w", err))
		}
	})
	return c.closeErr
}

func (c *Cluster) indices() []int {
	ix := make([]int, len(c.servers))
	for i := range ix {
		ix[i] = i
	}
	return ix
}
