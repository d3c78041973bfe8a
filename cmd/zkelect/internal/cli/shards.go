package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/zkelectd"
	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zkelecthttp"
	"github.com/zkelect/zkelect/zxidfence"
)

// maxShardCount bounds --shards N.
const maxShardCount = 100000

type shardsFlags struct {
	common         commonFlags
	root           string
	member         string
	shards         string
	exec           string
	listen         string
	listenTLS      listenTLSFlags
	grace          time.Duration
	handoffTimeout time.Duration
	restartGrace   time.Duration
	startupSettle  time.Duration
	expected       int
	maxHandoffs    int
	perSession     int
	juteMaxBuffer  int
	weight         int
	advertise      string
	labels         map[string]string
	watchdog       bool
	// maxWatchStreams caps concurrent /v1/watch streams (zkelecthttp's
	// MaxWatchStreams).
	maxWatchStreams int
	// httpIdle closes keep-alive connections idle for longer.
	httpIdle time.Duration
}

func newShardsCmd() *cobra.Command {
	f := &shardsFlags{}
	cmd := &cobra.Command{
		Use:   "shards --root ROOT --shards N|LIST [flags]",
		Short: "Run the shard-ownership daemon: balanced per-shard leaders",
		Long: `Join the members under ROOT and lead a balanced share of the shards, one election
per shard over a ZooKeeper session (more sessions of its own above
--max-shards-per-session elections, so that no session's closeSession
transaction exceeds jute.maxbuffer). With --exec, each led shard runs a command
(through /bin/sh -c) with {token} substituted and ZKELECT_SHARD,
ZKELECT_FENCING_TOKEN, ZKELECT_ELECTION and ZKELECT_PARTICIPANT_ID set; {shard}
becomes "$ZKELECT_SHARD", quoted for where it stands (bare, "{shard}" or
'{shard}'), so a shard id is one argument and never shell code. It is
stopped when the leadership ends: SIGTERM to its whole process group (the
shell and what it started, so a template with or without "exec" works and a
worker's TERM handler runs), then SIGKILL after --grace; it is restarted if it
exits while the shard is still led. Child start and stop are logged at info
with shard, token, pid and exit status.

--shards 64 means shards "0".."63"; --shards eu,us,ap names them. --weight sets
this member's share relative to the others' (no member leads more than
ceil(S*w/sum of weights) of S shards); --advertise (default --listen) and
--label are published for routers. Each child also gets ZKELECT_ZNODE and
ZKELECT_ZNODE_VERSION, the leader's znode and version for zxidfence's ZooKeeper
guard.
The daemon serves /metrics, /healthz, /readyz, /v1/leaderships (this member's,
JSON), /v1/owners (every shard's leader with its address and token, every
member's address, weight, labels and drain state, the freeze and pins: the JSON
of status -o json) and /v1/watch (Server-Sent Events, one per leader change,
resumable with Last-Event-ID; at most --max-watch-streams at once) on --listen,
through the library's package zkelecthttp; idle keep-alive connections are
closed after --http-idle-timeout. /healthz answers 503 with the reason
when the session has had no answer from ZooKeeper for a session timeout (cut
off past its lease), has expired and is not replaced yet, or a child is still
running more than --grace after its leadership ended. /readyz answers 503 until
the member is registered and past its first balance, whenever it is not
registered, and from a SIGTERM on (draining).

Operators change a running root with the verbs below (drain, undrain, freeze,
unfreeze, move, unmove, pin, unpin, weight): they write <root>/operator in ZooKeeper,
which every member follows. Each is idempotent and prints what changed; each
refuses (exit 2, naming it) a root where no shards daemon has run.`,
		Example: `  zkelect shards --zk 127.0.0.1:2181 --root /apps/billing --member node-a --shards 64

  zkelect shards --root /apps/billing --shards 256 --weight 2 --advertise 10.0.0.7:8080 \
      --exec 'exec ./worker --partition {shard} --fencing-token {token}'

  zkelect shards drain --root /apps/billing --member node-a --wait

  # a secured ensemble: TLS to its secure client port, a SASL login whose
  # identity alone may change the group's znodes (--acl group, the default)
  zkelect shards --zk zk1:2281,zk2:2281,zk3:2281 --zk-tls-ca /etc/zkelect/zk-ca.pem \
      --zk-auth sasl --zk-auth-file /etc/zkelect/zk.cred --root /apps/billing --shards 64`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			shards, err := f.validate()
			if err != nil {
				return err
			}
			return runShards(cmd, f, shards)
		},
	}
	addShardsVerbs(cmd)
	f.common.register(cmd.Flags())
	f.common.registerACL(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&f.root, "root", "", "partition root, e.g. /apps/billing (required)")
	fs.StringVar(&f.member, "member", defaultMemberID(), "member id, unique among live members (default $ZKELECT_MEMBER or the host name)")
	hideDefault(fs, "member")
	fs.StringVar(&f.shards, "shards", "", `shard count N (shards "0".."N-1") or a comma-separated list of ids (required)`)
	fs.StringVar(&f.exec, "exec", "", "command template run per led shard; {shard} and {token} are substituted")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:9464", "HTTP address for /metrics, /healthz, /readyz, /v1/leaderships, /v1/owners and /v1/watch")
	f.listenTLS.register(fs)
	fs.IntVar(&f.maxWatchStreams, "max-watch-streams", zkelecthttp.DefaultMaxWatchStreams,
		"/v1/watch streams served at once; more get 503 with the reason (each holds about 25 KiB and 2 goroutines)")
	fs.DurationVar(&f.httpIdle, "http-idle-timeout", zkelecthttp.IdleTimeout, "how long an idle keep-alive HTTP connection stays open")
	fs.DurationVar(&f.grace, "grace", maxDefaultGrace, graceUsage)
	fs.Lookup("grace").DefValue = "0s" // no "(default 3s)": graceUsage states the default, which follows the session timeout
	fs.DurationVar(&f.handoffTimeout, "handoff-timeout", partition.DefaultHandoffTimeout,
		"how long a handoff waits for a shard's work to stop (the library's default); keep it above --grace")
	fs.IntVar(&f.maxHandoffs, "max-handoffs", partition.DefaultMaxConcurrentHandoffs, "balancing handoffs in flight at once")
	registerWatchdog(fs, &f.watchdog)
	fs.DurationVar(&f.restartGrace, "restart-grace", 0,
		"how long a departed member's shards stay reserved for it (0: twice the session timeout; negative: none)")
	fs.IntVar(&f.weight, "weight", 1, fmt.Sprintf("this member's weight, its share of the shards relative to the others' (1..%d)", partition.MaxWeight))
	fs.StringVar(&f.advertise, "advertise", "", "address published for routers (/v1/owners, status); default: --listen, an unspecified host (0.0.0.0) replaced by the host name")
	fs.StringToStringVar(&f.labels, "label", nil, "label published with the member, key=value (repeatable), e.g. --label zone=eu-1")
	fs.DurationVar(&f.startupSettle, "startup-settle", partition.DefaultStartupSettle,
		"how long a starting member waits for the membership to stop changing before its first elections (0: the default; negative: no wait)")
	fs.IntVar(&f.expected, "expected-members", 0,
		"how many members the fleet runs: the startup wait ends as soon as that many running the same shard list are live (0: wait on --startup-settle alone)")
	fs.IntVar(&f.perSession, "max-shards-per-session", 0,
		"elections one ZooKeeper session carries at most; more use further sessions (0: 5000, fewer for long paths)")
	fs.IntVar(&f.juteMaxBuffer, "jute-maxbuffer", 0,
		"the ensemble's jute.maxbuffer in bytes, bounding a session's closeSession and the shard listing (0: ZooKeeper's default 1048575)")
	return cmd
}

// defaultMemberID is $ZKELECT_MEMBER, else the host name.
func defaultMemberID() string {
	if m := os.Getenv("ZKELECT_MEMBER"); m != "" {
		return m
	}
	h, _ := os.Hostname()
	return h
}

// validate checks the flags and returns the shard ids.
func (f *shardsFlags) validate() ([]string, error) {
	if err := f.common.validate(); err != nil {
		return nil, err
	}
	if err := checkZNodePath("root", f.root); err != nil {
		return nil, err
	}
	if err := partition.ValidateID(f.member); err != nil {
		return nil, fmt.Errorf("invalid --member %q: %w (use a short name such as node-a)", f.member, err)
	}
	switch {
	case f.grace < 0:
		return nil, fmt.Errorf("invalid --grace %s: must not be negative (e.g. 3s)", f.grace)
	case f.handoffTimeout <= 0:
		return nil, fmt.Errorf("invalid --handoff-timeout %s: must be positive (e.g. 10s)", f.handoffTimeout)
	case f.maxHandoffs < 1:
		return nil, fmt.Errorf("invalid --max-handoffs %d: must be at least 1 (e.g. 8)", f.maxHandoffs)
	case f.perSession < 0:
		return nil, fmt.Errorf("invalid --max-shards-per-session %d: must not be negative (0: the default, 5000)", f.perSession)
	case f.juteMaxBuffer < 0:
		return nil, fmt.Errorf("invalid --jute-maxbuffer %d: must not be negative (0: ZooKeeper's default)", f.juteMaxBuffer)
	case f.httpIdle <= 0:
		return nil, fmt.Errorf("invalid --http-idle-timeout %s: must be positive (e.g. 1m)", f.httpIdle)
	case f.maxWatchStreams < 1:
		return nil, fmt.Errorf("invalid --max-watch-streams %d: must be at least 1 (e.g. %d)", f.maxWatchStreams, zkelecthttp.DefaultMaxWatchStreams)
	case f.weight < 1 || f.weight > partition.MaxWeight:
		return nil, fmt.Errorf("invalid --weight %d: want 1..%d (e.g. 2 for a machine twice as big)", f.weight, partition.MaxWeight)
	}
	if _, _, err := splitListen(f.listen); err != nil {
		return nil, err
	}
	if _, err := f.listenTLS.config(); err != nil {
		return nil, err
	}
	return parseShards(f.shards)
}

func splitListen(addr string) (string, int, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", 0, fmt.Errorf("invalid --listen %q: want host:port, e.g. 127.0.0.1:9464", addr)
	}
	port, err := strconv.Atoi(addr[i+1:])
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("invalid --listen %q: port must be a number in 0..65535", addr)
	}
	return addr[:i], port, nil
}

// parseShards reads --shards: a count or a list of ids.
func parseShards(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("missing --shards: pass a count such as 64 or a list such as eu,us,ap")
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > maxShardCount {
			return nil, fmt.Errorf("invalid --shards %d: want a count in 1..%d", n, maxShardCount)
		}
		return partition.Range(0, n), nil
	}
	if looksLikeNumber(s) {
		return nil, fmt.Errorf("invalid --shards %q: a count is a plain decimal integer such as 1000 "+
			"(a list of ids has commas, e.g. eu,us,ap)", s)
	}
	ids := strings.Split(s, ",")
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		id = strings.TrimSpace(id)
		if err := partition.ValidateID(id); err != nil {
			return nil, fmt.Errorf("invalid --shards entry %q: %w", id, err)
		}
		if seen[id] {
			return nil, fmt.Errorf("invalid --shards: %q listed twice", id)
		}
		seen[id] = true
		ids[i] = id
	}
	return ids, nil
}

// runShards runs the daemon until SIGINT or SIGTERM, then resigns every
// shard gracefully.
func runShards(cmd *cobra.Command, f *shardsFlags, shards []string) error {
	log, err := f.common.logger(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	log = log.With().Str("member", f.member).Str("root", f.root).Logger()
	ctx, stop := signalContext(cmd.Context())
	defer stop()

	reg, metrics := zkelectd.NewRegistry(f.member, buildVersion())
	sess, err := f.common.connect(ctx, log, reg)
	if err != nil {
		return err
	}
	f.grace = childGrace(cmd.Flags(), f.grace, sess.Timeout())
	work := zkelectd.NewShardWork(f.member, f.root, zkelectd.ExecTemplate(f.exec), f.grace, log, metrics)
	work.DropEnv = []string{envZKCredentials}
	work.Watchdog = zkelectd.StartWatchdog(f.watchdog, log, sess)
	defer func() {
		sess.Close()
		zkelectd.StopWatchdog(log, work.Watchdog) // after the session is closed: a kill in between still ends it
	}()
	acl, _ := f.common.znodeACL() // checked by validate
	mgr, err := partition.NewManager(sess, f.root, partition.Config{
		MemberID: f.member,
		ACL:      acl,
		ACLCheck: f.common.aclCheck(),
		Shards:   shards,
		OnStartedLeading: func(ctx context.Context, shard string, token zxidfence.Token) {
			work.Lead(ctx, shard, token)
		},
		HandoffTimeout:        f.handoffTimeout,
		MaxConcurrentHandoffs: f.maxHandoffs,
		RestartGrace:          f.restartGrace,
		StartupSettle:         f.startupSettle,
		ExpectedMembers:       f.expected,
		MaxShardsPerSession:   f.perSession,
		JuteMaxBuffer:         f.juteMaxBuffer,
		Weight:                f.weight,
		Address:               f.advertised(),
		Labels:                f.labels,
		Logger:                log,
		Metrics:               reg,
	})
	if err != nil {
		return fmt.Errorf("partition root %s: %w", f.root, err)
	}
	api, err := zkelecthttp.NewShards(sess, mgr, zkelecthttp.ShardsOptions{
		Root: f.root, Member: f.member, Shards: shards, Leaderships: work.Leaderships(),
		Checks:          []zkelecthttp.Check{work.ChildHealth},
		OnReadiness:     metrics.SetReady,
		MaxWatchStreams: f.maxWatchStreams,
	})
	if err != nil {
		return err
	}

	hctx, hcancel := context.WithCancel(context.Background())
	defer hcancel()
	tlsCfg, err := f.listenTLS.config()
	if err != nil {
		return err
	}
	addr, waitHTTP, err := zkelectd.ServeHTTPS(hctx, f.listen, zkelectd.NewMux(reg, api), tlsCfg, f.httpIdle)
	if err != nil {
		return err
	}
	zkelectd.WarnPlain(log, addr, tlsCfg != nil)
	apiDone := make(chan struct{})
	go func() { // follows the root for /v1/owners and /v1/watch
		defer close(apiDone)
		if err := api.Run(hctx); err != nil && hctx.Err() == nil { // a refusal, or the session's end: not a cut
			log.Error().Err(err).Msg("stopped following the root: /v1/owners and /v1/watch no longer change")
		}
	}()
	defer func() { hcancel(); <-apiDone }()
	f.warnTimings(log, sess.Timeout())
	log.Info().Stringer("listen", addr).Int("shards", len(shards)).Msg("shards daemon started")
	stopDrain := context.AfterFunc(ctx, api.Drain) // a signal: not ready while handing off
	defer stopDrain()
	runErr := mgr.Run(ctx)
	hcancel()
	httpErr := waitHTTP()
	if errors.Is(runErr, partition.ErrDuplicateMember) {
		return fmt.Errorf("%w (another live process runs --member %s: pick another id)", runErr, f.member)
	}
	if errors.Is(runErr, recipe.ErrUnsafeACL) {
		return fmt.Errorf("partition manager: %w (fix its ACL, or pass --accept-open-acl to run anyway)", runErr)
	}
	if runErr != nil && ctx.Err() == nil {
		return fmt.Errorf("partition manager: %w", runErr)
	}
	log.Info().Msg("shards daemon stopped")
	return httpErr
}

// advertised is the address the member publishes: --advertise, else
// --listen with an unspecified host (0.0.0.0, ::, none) replaced by the
// host name, which others can reach.
func (f *shardsFlags) advertised() string {
	if f.advertise != "" {
		return f.advertise
	}
	host, port, err := splitListen(f.listen)
	if err != nil {
		return f.listen
	}
	switch strings.Trim(host, "[]") {
	case "", "0.0.0.0", "::":
		if h, err := os.Hostname(); err == nil && h != "" {
			return net.JoinHostPort(h, strconv.Itoa(port))
		}
	}
	return f.listen
}

// warnTimings logs flag combinations that weaken the stop-before-start
// guarantee for --exec children; sessionTimeout is the negotiated one.
func (f *shardsFlags) warnTimings(log zerolog.Logger, sessionTimeout time.Duration) {
	if f.exec == "" {
		return
	}
	if f.grace > sessionTimeout/3 {
		log.Warn().Dur("grace", f.grace).Dur("session_timeout", sessionTimeout).
			Msg("--grace is above a third of the session timeout: a cut-off member's child may still be stopping when the next leader's child starts")
	}
	if f.handoffTimeout <= f.grace {
		log.Warn().Dur("grace", f.grace).Dur("handoff_timeout", f.handoffTimeout).
			Msg("--handoff-timeout is not above --grace: a handoff may resign before a slow child has stopped")
	}
}

// looksLikeNumber reports whether s, not a plain integer, is a number in
// another notation (1e3, 0x10, 1_000, 2.5, +1.0): a mistyped count, not a
// shard id.
func looksLikeNumber(s string) bool {
	if s == "" || !strings.ContainsRune("0123456789+-.", rune(s[0])) {
		return false
	}
	_, ferr := strconv.ParseFloat(s, 64)
	_, ierr := strconv.ParseInt(s, 0, 64)
	return ferr == nil || ierr == nil
}
