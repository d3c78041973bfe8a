package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/zkelectd"
	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/recipe/watchdog"
)

// Environment variables handed to a child started by run (and by shards):
// package daemon's.
const (
	envFencingToken  = zkelectd.EnvFencingToken  // the leadership's token, decimal
	envElection      = zkelectd.EnvElection      // the election path
	envZnode         = zkelectd.EnvZnode         // the leader's znode
	envZnodeVersion  = zkelectd.EnvZnodeVersion  // its data version, for the ZooKeeper guard
	envParticipantID = zkelectd.EnvParticipantID // this candidate's id
)

// restartBackoff is the pause between a child's exit and the next campaign
// with --restart, so a child that fails at once does not churn leadership.
const restartBackoff = time.Second

type runFlags struct {
	common   commonFlags
	election string
	id       string
	grace    time.Duration
	restart  bool
	watchdog bool
}

func newRunCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run --election PATH [flags] -- CMD [ARGS...]",
		Short: "Run a command only while this process is the leader",
		Long: `Campaign for leadership of an election and run CMD while leading: a singleton
job with fencing. The child gets ZKELECT_FENCING_TOKEN (decimal zxid),
ZKELECT_ELECTION, ZKELECT_ZNODE, ZKELECT_ZNODE_VERSION and ZKELECT_PARTICIPANT_ID
in its environment.

When leadership ends (session expired, connection lost, znode deleted) the
child's process group gets SIGTERM, then SIGKILL after --grace, and run
campaigns again (a descendant that leaves the group, as setsid does, is not
stopped: keep workers in the group). Leadership ends on connection loss after at most about 2/3 of
the session timeout, while a new leader is elected only after the full session
timeout: keep --grace below a third of --session-timeout so the two children
never overlap. When the child exits on its own, run resigns and exits with the
child's status (128+N for signal N), or campaigns again with --restart.
SIGINT and SIGTERM are forwarded to the child; run then resigns and exits
with the child's status, saying it stopped as asked. Interrupted while no child runs (before leading, or
between children with --restart), run withdraws and exits 130 for SIGINT,
143 for SIGTERM.`,
		Example: `  # one nightly report across three hosts
  zkelect run --zk zk1:2181,zk2:2181,zk3:2181 --election /apps/report/leader -- ./report.sh

  # keep a singleton consumer running, re-campaigning when it exits
  ZKELECT_ZK=127.0.0.1:2181 zkelect run --election /apps/consumer --restart --grace 3s -- ./consumer

  # digest credentials (user:password) from a file, never on the command line;
  # the election's znodes get the group ACL: only that identity may delete them
  zkelect run --zk zk1:2181 --zk-auth digest --zk-auth-file /etc/zkelect/zk.cred \
      --election /apps/report/leader -- ./report.sh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			argv, err := commandAfterDash(cmd, args)
			if err != nil {
				return err
			}
			if err := f.validate(); err != nil {
				return err
			}
			return runLeader(cmd, f, argv)
		},
	}
	f.common.register(cmd.Flags())
	f.common.registerACL(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&f.election, "election", "", "election path, e.g. /apps/cron/leader (required)")
	fs.StringVar(&f.id, "id", defaultParticipantID(), "participant id stored in this candidate's znode (default host:pid)")
	hideDefault(fs, "id")
	fs.DurationVar(&f.grace, "grace", maxDefaultGrace, graceUsage)
	fs.Lookup("grace").DefValue = "0s" // no "(default 3s)": graceUsage states the default, which follows the session timeout
	fs.BoolVar(&f.restart, "restart", false, "campaign again when the child exits instead of exiting with its status")
	registerWatchdog(fs, &f.watchdog)
	return cmd
}

func (f *runFlags) validate() error {
	if err := f.common.validate(); err != nil {
		return err
	}
	if err := checkZNodePath("election", f.election); err != nil {
		return err
	}
	if f.id == "" {
		return errors.New("empty --id: pass a participant id such as the host name")
	}
	if len(f.id) > recipe.MaxParticipantIDLen { // checked before connecting
		return fmt.Errorf("invalid --id: %d bytes, at most %d (it is stored in the candidate's znode)", len(f.id), recipe.MaxParticipantIDLen)
	}
	if f.grace < 0 {
		return fmt.Errorf("invalid --grace %s: must not be negative", f.grace)
	}
	return nil
}

// commandAfterDash returns the command line given after "--".
func commandAfterDash(cmd *cobra.Command, args []string) ([]string, error) {
	dash := cmd.ArgsLenAtDash()
	usage := "missing command: give it after --, e.g. zkelect run --election /apps/job -- ./job.sh"
	switch {
	case dash < 0 && len(args) > 0:
		return nil, fmt.Errorf("unexpected argument %q: put the command after --", args[0])
	case dash < 0 || dash == len(args):
		return nil, errors.New(usage)
	case dash > 0:
		return nil, fmt.Errorf("unexpected argument %q before --", args[0])
	}
	argv := args[dash:]
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil, &exitError{code: 127, err: fmt.Errorf("command %q not found: check the name and $PATH", argv[0])}
	}
	return argv, nil
}

// defaultParticipantID is host:pid, unique among processes on a network.
func defaultParticipantID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return host + ":" + strconv.Itoa(os.Getpid())
}

// runLeader connects, campaigns and supervises the child until the child
// exits (without --restart) or a signal arrives.
func runLeader(cmd *cobra.Command, f *runFlags, argv []string) error {
	c, err := f.common.dial(cmd)
	if err != nil {
		return err
	}
	ctx, log, sess := c.ctx, c.log, c.sess
	wd := zkelectd.StartWatchdog(f.watchdog, log, sess)
	defer func() {
		c.close()
		zkelectd.StopWatchdog(log, wd) // after the session is closed: a kill in between still ends it
	}()
	// Leaving waits at most half a session timeout to confirm the znode's
	// deletion (twice: the delete, then calls still in flight): cut off from
	// the ensemble, the znode goes with the session anyway, and a SIGTERM
	// must not keep run alive for the library's default of 2 x 10s.
	acl, _ := f.common.znodeACL() // checked by validate
	cand, err := recipe.NewCandidate(sess, f.election, recipe.WithParticipantID(f.id),
		recipe.WithCloseTimeout(sess.Timeout()/2), recipe.WithACL(acl), recipe.WithACLCheck(f.common.aclCheck()))
	if err != nil {
		return fmt.Errorf("election %s: %w", f.election, err)
	}
	defer cand.Close()
	log = log.With().Str("election", f.election).Str("participant", f.id).Logger()
	r := &runner{flags: f, argv: argv, log: log, cmd: cmd, watchdog: wd, sessionTimeout: sess.Timeout}
	return r.loop(ctx, cand)
}

// runner is the state of one run command.
type runner struct {
	flags *runFlags
	argv  []string
	log   zerolog.Logger
	cmd   *cobra.Command
	// watchdog guards the child's process group (nil: none).
	watchdog *watchdog.Process
	// sessionTimeout is the session's negotiated timeout now: a new
	// session after an expiry may be granted another.
	sessionTimeout func() time.Duration
	warnedFor      time.Duration // the session timeout --grace was last warned about
}

// grace is the child's grace for this leadership: --grace, or by default
// from the session timeout negotiated now (childGrace), computed at each
// leadership since each session negotiates its own. It warns, once per
// session timeout, when the grace is above a third of it.
func (r *runner) grace() time.Duration {
	t := r.sessionTimeout()
	g := childGrace(r.cmd.Flags(), r.flags.grace, t)
	if g > t/3 && r.warnedFor != t {
		r.warnedFor = t
		r.log.Warn().Dur("grace", g).Dur("session_timeout", t).
			Msg("--grace is above a third of the session timeout: a cut-off leader's child may still be stopping when the next leader's child starts")
	}
	return g
}

// loop campaigns, leads and campaigns again until it is told to exit.
func (r *runner) loop(ctx context.Context, cand *recipe.Candidate) error {
	for {
		r.log.Info().Msg("campaigning")
		lead, err := cand.Campaign(ctx)
		if err != nil {
			if ctx.Err() != nil {
				r.log.Info().Msg("interrupted before leading; exiting")
				return interrupted(ctx, "campaign in "+r.flags.election)
			}
			if errors.Is(err, recipe.ErrUnsafeACL) {
				return fmt.Errorf("campaign in %s: %w (fix its ACL, or pass --accept-open-acl to run anyway)", r.flags.election, err)
			}
			return fmt.Errorf("campaign in %s: %w", r.flags.election, err)
		}
		if exit, code := r.lead(ctx, lead); exit {
			if ctx.Err() != nil {
				return stoppedAsAsked(ctx, code)
			}
			return childExit(code)
		}
		if !retry.Sleep(ctx, restartBackoff) {
			return interrupted(ctx, "waiting to campaign again in "+r.flags.election)
		}
	}
}

// lead runs the child for one leadership. It reports whether run must exit,
// and with which status; otherwise run campaigns again.
func (r *runner) lead(ctx context.Context, lead *recipe.Leadership) (exit bool, code int) {
	log := r.log.With().Str("znode", lead.Znode()).Stringer("token", lead.Token()).Logger()
	grace := r.grace()
	log.Info().Strs("command", r.argv).Msg("leading; starting child")
	c, err := startChild(childSpec{
		Path: r.argv[0], Args: r.argv[1:],
		Env: []string{
			envFencingToken + "=" + lead.Token().Decimal(),
			envElection + "=" + r.flags.election,
			envZnode + "=" + lead.Znode(),
			envZnodeVersion + "=" + strconv.Itoa(int(lead.Version())),
			envParticipantID + "=" + r.flags.id,
		},
		Stdin: r.cmd.InOrStdin(), Stdout: r.cmd.OutOrStdout(), Stderr: r.cmd.ErrOrStderr(),
		Watchdog: r.watchdog,
	})
	if err != nil {
		log.Error().Err(err).Msg("cannot start child; resigning")
		r.resign(lead)
		return true, 127
	}
	select {
	case <-lead.Done():
		log.Warn().AnErr("reason", lead.Err()).Int("pid", c.PID()).Msg("leadership lost; stopping child")
		c.Stop(syscall.SIGTERM, grace)
		log.Info().Int("exit_status", c.ExitCode()).Msg("child stopped; campaigning again")
		return false, 0
	case <-c.Done():
		code := c.ExitCode()
		log.Info().Int("exit_status", code).Msg("child exited; resigning")
		r.resign(lead)
		return !r.flags.restart, code
	case <-ctx.Done():
		sig := signalOf(ctx)
		log.Info().Stringer("signal", sig).Int("pid", c.PID()).Msg("forwarding signal to child")
		c.Stop(sig, grace)
		code := c.ExitCode()
		log.Info().Int("exit_status", code).Msg("child exited; resigning")
		r.resign(lead)
		return true, code
	}
}

// resign gives up leadership with a fresh context: the caller's may be done.
func (r *runner) resign(lead *recipe.Leadership) {
	ctx, cancel := context.WithTimeout(context.Background(), r.flags.common.sessionTimeout)
	defer cancel()
	if err := lead.Resign(ctx); err != nil {
		r.log.Warn().Err(err).Msg("resign failed; the znode goes with the session")
	}
}

// childExit turns a child's exit status into run's own: nil for 0.
func childExit(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code, err: fmt.Errorf("child exited with status %d", code)}
}

// stoppedAsAsked is run's result when a signal stopped it while a child ran
// (the signal forwarded, the child exited with code): nil for 0, else the
// child's status with a message saying the stop was asked for.
func stoppedAsAsked(ctx context.Context, code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code, err: fmt.Errorf("stopped as asked by %s (forwarded to the child, which exited with status %d)",
		signalName(signalOf(ctx)), code)}
}
