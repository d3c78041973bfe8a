package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/zkelect/zkelect/internal/znode"
	"github.com/zkelect/zkelect/recipe"
)

// Defaults for the shared flags.
const (
	// maxDefaultGrace caps the default --grace of run and shards: a third
	// of the negotiated session timeout, at most this.
	maxDefaultGrace       = 3 * time.Second
	defaultSessionTimeout = 10 * time.Second
	// defaultConnectTimeout is shorter than recipe.DefaultConnectTimeout
	// (15s) on purpose: a command typed or scripted should say "cannot
	// reach" quickly, and a daemon that cannot connect exits and is
	// restarted by its supervisor (give more where the ensemble starts
	// with the fleet, as docker-compose.yml does with 30s).
	defaultConnectTimeout = 5 * time.Second
	envZK                 = "ZKELECT_ZK"
	// maxSessionTimeout is the longest session timeout recipe.Connect accepts.
	maxSessionTimeout = 24 * time.Hour
)

// commonFlags are the connection and logging flags shared by every command
// that talks to ZooKeeper.
type commonFlags struct {
	zk             string
	sessionTimeout time.Duration
	connectTimeout time.Duration
	logLevel       string
	logFormat      string
	followConfig   bool // --zk-follow-config
	auth           authFlags
	tls            tlsFlags
	acl            *aclFlag // nil unless the command creates znodes (registerACL)
}

// register adds the shared flags to fs with log level info. The --zk
// default comes from $ZKELECT_ZK.
func (f *commonFlags) register(fs *pflag.FlagSet) { f.registerWithLevel(fs, "info") }

// registerWithLevel adds the shared flags to fs with the given default log
// level: tools that print results (status, watch) log only errors.
func (f *commonFlags) registerWithLevel(fs *pflag.FlagSet, level string) {
	fs.StringVar(&f.zk, "zk", os.Getenv(envZK),
		"ZooKeeper ensemble, comma-separated host:port list (default $"+envZK+"); no chroot suffix: put it in the paths")
	hideDefault(fs, "zk")
	fs.DurationVar(&f.sessionTimeout, "session-timeout", defaultSessionTimeout,
		"requested ZooKeeper session timeout; the server may negotiate another")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", defaultConnectTimeout,
		"give up if no session is established within this time (shorter than the library's 15s: commands fail fast, supervisors restart daemons)")
	fs.BoolVar(&f.followConfig, "zk-follow-config", true,
		"also dial the members the ensemble's /zookeeper/config names (ZooKeeper 3.5+ dynamic configuration); "+
			"--zk-follow-config=false where clients reach ZooKeeper only through --zk (a load balancer, Service, NodePort or NAT) "+
			"or where whoever may run reconfig is not trusted to point clients elsewhere")
	fs.StringVar(&f.logLevel, "log-level", level, "log level: debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "console", "log format: console or json")
	f.tls.register(fs)
	f.auth.register(fs)
}

// registerACL adds --acl, for commands that create znodes.
func (f *commonFlags) registerACL(fs *pflag.FlagSet) {
	f.acl = &aclFlag{}
	f.acl.register(fs)
}

// znodeACL returns the ACL --acl names (zk.WorldACL(zk.PermAll) for a
// command without the flag).
func (f *commonFlags) znodeACL() ([]zk.ACL, error) {
	if f.acl == nil {
		return zk.WorldACL(zk.PermAll), nil
	}
	return f.acl.acl(&f.auth, f.tls.cert != "")
}

// aclCheck returns what --accept-open-acl asks (recipe.ACLCheckRefuse for
// a command without --acl).
func (f *commonFlags) aclCheck() recipe.ACLCheck {
	if f.acl == nil {
		return recipe.ACLCheckRefuse
	}
	return f.acl.check()
}

// validate checks every shared flag, returning a one-line error that names
// the fix.
func (f *commonFlags) validate() error {
	if _, err := f.servers(); err != nil {
		return err
	}
	if f.sessionTimeout <= 0 || f.sessionTimeout > maxSessionTimeout {
		return fmt.Errorf("invalid --session-timeout %s: must be positive and at most %s (e.g. 10s)",
			f.sessionTimeout, maxSessionTimeout)
	}
	if f.connectTimeout <= 0 {
		return fmt.Errorf("invalid --connect-timeout %s: must be positive (e.g. 5s)", f.connectTimeout)
	}
	if _, err := f.logger(io.Discard); err != nil {
		return err
	}
	if _, err := f.auth.options(); err != nil {
		return err
	}
	if _, err := f.tls.config(); err != nil {
		return err
	}
	_, err := f.znodeACL()
	return err
}

// servers parses --zk into host:port addresses.
func (f *commonFlags) servers() ([]string, error) {
	if strings.TrimSpace(f.zk) == "" {
		return nil, errors.New("no ZooKeeper ensemble given: pass --zk host:port[,host:port] or set " + envZK)
	}
	if i := strings.IndexByte(f.zk, '/'); i >= 0 {
		return nil, fmt.Errorf("invalid --zk %q: a chroot suffix (%s) is not supported; drop it and put it in front of "+
			"--election or --root instead (e.g. --zk %s --root %s/billing)", f.zk, f.zk[i:], f.zk[:i], strings.TrimSuffix(f.zk[i:], "/"))
	}
	var out []string
	for _, s := range strings.Split(f.zk, ",") {
		s = strings.TrimSpace(s)
		if err := checkHostPort(s); err != nil {
			return nil, fmt.Errorf("invalid --zk entry %q: %w", s, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// checkHostPort accepts host:port with a port in 1..65535.
func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return errors.New("want host:port, e.g. 127.0.0.1:2181")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return errors.New("port must be a number in 1..65535")
	}
	return nil
}

// logger builds the zerolog logger the flags ask for, writing to w.
func (f *commonFlags) logger(w io.Writer) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(strings.ToLower(f.logLevel))
	if err != nil || f.logLevel == "" {
		return zerolog.Nop(), fmt.Errorf("invalid --log-level %q: use debug, info, warn or error", f.logLevel)
	}
	switch f.logFormat {
	case "json":
	case "console":
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000", NoColor: !isTerminal(w)}
	default:
		return zerolog.Nop(), fmt.Errorf("invalid --log-format %q: use console or json", f.logFormat)
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// connect opens a session on the ensemble named by --zk. An ensemble that
// does not answer within --connect-timeout is reported in one line.
func (f *commonFlags) connect(ctx context.Context, log zerolog.Logger, reg prometheus.Registerer) (*recipe.Session, error) {
	servers, err := f.servers()
	if err != nil {
		return nil, err
	}
	opts := []recipe.SessionOption{
		recipe.WithSessionTimeout(f.sessionTimeout),
		recipe.WithConnectTimeout(f.connectTimeout),
		recipe.WithLogger(log),
		recipe.WithEnsembleTracking(f.followConfig),
	}
	if reg != nil {
		opts = append(opts, recipe.WithMetrics(reg))
	}
	auth, err := f.auth.options()
	if err != nil {
		return nil, err
	}
	opts = append(opts, auth...)
	f.auth.warnLoosePermissions(log)
	tlsCfg, err := f.tls.config()
	if err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		opts = append(opts, recipe.WithTLS(tlsCfg))
	}
	f.auth.warnInClear(log, tlsCfg != nil)
	sess, err := recipe.Connect(ctx, servers, opts...)
	switch {
	case err == nil:
		return sess, nil
	case ctx.Err() != nil:
		return nil, interrupted(ctx, "connect to ZooKeeper at "+f.zk)
	case tlsAlert(err) != "":
		return nil, fmt.Errorf("ZooKeeper at %s refused the TLS connection with alert %q: check --zk-tls-cert and --zk-tls-key, "+
			"a client certificate the servers' ssl.clientAuth trusts (%v)", f.zk, tlsAlert(err), err)
	case errors.Is(err, recipe.ErrTLS):
		return nil, fmt.Errorf("TLS to ZooKeeper at %s failed: check --zk-tls-ca, --zk-tls-server-name and that --zk names the secure client ports (%v)", f.zk, err)
	case errors.Is(err, recipe.ErrAuthFailed):
		return nil, fmt.Errorf("ZooKeeper at %s refused the credentials of --zk-auth %s: %v", f.zk, f.auth.scheme, err)
	case errors.Is(err, recipe.ErrACLDenied):
		return nil, fmt.Errorf("ZooKeeper at %s refused the credentials of --zk-auth %s: check them (%v)", f.zk, f.auth.scheme, err)
	case errors.Is(err, recipe.ErrNotZooKeeper):
		foreign := notZooKeeper(err)
		if len(foreign) >= len(servers) {
			return nil, fmt.Errorf("%s: check --zk", strings.Join(foreign, "; "))
		}
		return nil, fmt.Errorf("%s, and no other server of --zk %s answered within %s: check --zk and that the ensemble is running",
			strings.Join(foreign, "; "), f.zk, f.connectTimeout)
	case errors.Is(err, recipe.ErrUnreachable):
		return nil, fmt.Errorf("cannot reach ZooKeeper at %s within %s: check --zk and that the ensemble is running (%v)",
			f.zk, f.connectTimeout, err)
	default:
		// Refused for another reason (options, authentication): say so
		// rather than blame the network.
		return nil, fmt.Errorf("connect to ZooKeeper at %s: %v", f.zk, err)
	}
}

// client is what a command that talks to ZooKeeper holds: its logger, a
// context cancelled on SIGINT or SIGTERM, and an open session.
type client struct {
	ctx  context.Context
	log  zerolog.Logger
	sess *recipe.Session
	stop func()
}

// dial sets up a command's logger, signal context and session, reporting
// bad flags and an unreachable ensemble in one line. The caller must close
// the client.
func (f *commonFlags) dial(cmd *cobra.Command) (*client, error) {
	log, err := f.logger(cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	ctx, stop := signalContext(cmd.Context())
	sess, err := f.connect(ctx, log, nil)
	if err != nil {
		stop()
		return nil, err
	}
	return &client{ctx: ctx, log: log, sess: sess, stop: stop}, nil
}

// close closes the session, then stops listening for signals.
func (c *client) close() {
	c.sess.Close()
	c.stop()
}

// pathExamples are the example paths checkZNodePath's errors suggest, by
// flag name.
var pathExamples = map[string]string{
	"election": "/apps/cron/leader",
	"root":     "/apps/billing",
	"target":   "/apps/billing/ledger",
}

// hideDefault keeps --help from printing the value flag name's default
// resolved to on this machine (its host name, pid or environment): the
// flag's usage text says where the default comes from instead.
func hideDefault(fs *pflag.FlagSet, name string) { fs.Lookup(name).DefValue = "" }

// checkZNodePath validates a ZooKeeper path given in flag name, returning a
// one-line error with an example of a valid path.
func checkZNodePath(flag, p string) error {
	example := pathExamples[flag]
	if example == "" {
		example = pathExamples["election"]
	}
	bad := func(why string) error {
		return fmt.Errorf("invalid --%s %q: %s (e.g. %s)", flag, p, why, example)
	}
	switch {
	case p == "":
		return fmt.Errorf("missing --%s: pass a ZooKeeper path such as %s", flag, example)
	case p[0] != '/':
		return bad("a ZooKeeper path starts with /")
	case p == "/":
		return bad("ZooKeeper's root znode cannot be used; pick a path below it")
	case strings.HasSuffix(p, "/"):
		return bad("a ZooKeeper path does not end with /")
	}
	for _, seg := range strings.Split(p[1:], "/") {
		switch {
		case seg == "":
			return bad("empty path segment")
		case seg == "." || seg == "..":
			return bad("relative segments . and .. are not allowed")
		}
	}
	if !utf8.ValidString(p) {
		return bad("not valid UTF-8")
	}
	for _, r := range p {
		if znode.RefusedRune(r) {
			return bad(fmt.Sprintf("ZooKeeper refuses the character %U", r))
		}
	}
	if p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/") {
		return bad("/zookeeper is reserved")
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal) and
// $NO_COLOR is unset: only then are logs colored.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// childGrace is --grace as given, or by default a third of the negotiated
// session timeout, at most maxDefaultGrace: a cut-off leader notices the
// lost connection within about 2/3 of the timeout and the next leader
// starts after the full timeout, so the old child is gone before the new
// one starts.
func childGrace(fs *pflag.FlagSet, given, sessionTimeout time.Duration) time.Duration {
	if fs.Changed("grace") {
		return given
	}
	return min(maxDefaultGrace, sessionTimeout/3)
}

// graceUsage is the --grace help text of run and shards.
const graceUsage = "time between SIGTERM and SIGKILL when stopping the child (default a third of the session timeout, at most 3s); keep it under a third of the session timeout"

// notZooKeeper names each server err found speaking another protocol, as
// "127.0.0.1:5432 is not a ZooKeeper server (it answered with another
// protocol)".
func notZooKeeper(err error) []string {
	var names []string
	var walk func(error)
	walk = func(e error) {
		var nz *recipe.NotZooKeeperError
		if errors.As(e, &nz) && e == error(nz) {
			names = append(names, nz.Addr+" is not a ZooKeeper server (it answered with another protocol)")
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return names
}

// tlsAlert returns the TLS alert a server refused the connection with
// (recipe.TLSError.Alert), or "".
func tlsAlert(err error) string {
	var te *recipe.TLSError
	if errors.As(err, &te) {
		return te.Alert
	}
	return ""
}
