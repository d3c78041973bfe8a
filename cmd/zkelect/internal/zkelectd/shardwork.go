package zkelectd

import (
	"context"
	"os"
	"path"
	"strconv"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/supervisor"
	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/recipe/watchdog"
	"github.com/zkelect/zkelect/zkelecthttp"
	"github.com/zkelect/zkelect/zxidfence"
)

// childRestartBackoff is how long a shard's child waits before it is started
// again after exiting while its shard is still led.
const childRestartBackoff = time.Second

// ShardWork runs the per-shard work of a shards daemon: it records every
// leadership this member holds (for /v1/leaderships) and, with --exec,
// supervises one child per led shard (package supervisor).
type ShardWork struct {
	member  string
	root    string
	tmpl    ExecTemplate
	grace   time.Duration
	log     zerolog.Logger
	metrics *Metrics
	// Watchdog guards each child's process group (nil: none); set before
	// the first leadership.
	Watchdog *watchdog.Process
	// DropEnv names variables of this process's environment that no child
	// inherits (the CLI's ZooKeeper credentials: a child does the leader's
	// work, not the group's ZooKeeper administration); set before the first
	// leadership.
	DropEnv []string

	held     zkelecthttp.Leaderships // for /v1/leaderships
	stopping stops                   // children whose leadership ended, until reaped
}

// overdueStop returns a child still running longer than d after its
// leadership ended, if any.
func (w *ShardWork) overdueStop(d time.Duration) (stoppingChild, bool) { return w.stopping.overdue(d) }

// NewShardWork returns the per-shard work of member under the partition
// root: tmpl is the --exec template ("": no child, leaderships are only
// recorded), grace the time between a child's SIGTERM and its SIGKILL, m the
// daemon's collectors (NewRegistry).
func NewShardWork(member, root string, tmpl ExecTemplate, grace time.Duration, log zerolog.Logger, m *Metrics) *ShardWork {
	return &ShardWork{
		member: member, root: root, tmpl: tmpl, grace: grace, log: log, metrics: m,
	}
}

// Leaderships is the record of the leaderships this member holds, for
// zkelecthttp.ShardsOptions.Leaderships (/v1/leaderships).
func (w *ShardWork) Leaderships() *zkelecthttp.Leaderships { return &w.held }

// Lead holds shard until ctx is done (partition.Config.OnStartedLeading):
// it records the leadership and runs the shard's child (if any), restarting
// it childRestartBackoff after it exits while ctx is not done, and stops it
// (SIGTERM to its process group, then SIGKILL after grace) when ctx is done.
// It returns once the child has exited.
func (w *ShardWork) Lead(ctx context.Context, shard string, token zxidfence.Token) {
	defer w.held.Hold(shard, w.member, token)()
	if w.tmpl == "" {
		<-ctx.Done()
		return
	}
	log := w.log.With().Str("shard", shard).Stringer("token", token).Logger()
	for ctx.Err() == nil { // each start logs "shard child started"
		w.runChild(ctx, log, shard, token)
		if !retry.Sleep(ctx, childRestartBackoff) {
			return
		}
	}
}

// runChild runs the shard's child once, until it exits or ctx is done.
func (w *ShardWork) runChild(ctx context.Context, log zerolog.Logger, shard string, token zxidfence.Token) {
	argv := w.tmpl.argv(shard, token)
	env := []string{
		EnvFencingToken + "=" + token.Decimal(),
		EnvParticipantID + "=" + w.member,
		EnvShard + "=" + shard,
	}
	if lead, ok := recipe.LeadershipFrom(ctx); ok {
		// the election is the parent of the leader's znode, in the root's layout
		env = append(env, EnvElection+"="+path.Dir(lead.Znode()), EnvZnode+"="+lead.Znode(), EnvZnodeVersion+"="+strconv.Itoa(int(lead.Version())))
	}
	c, err := supervisor.Start(supervisor.Spec{
		Path: argv[0], Args: argv[1:],
		Env:    env,
		Stdout: os.Stdout, Stderr: os.Stderr,
		Watchdog: w.Watchdog,
		DropEnv:  w.DropEnv,
	})
	if err != nil {
		log.Error().Err(err).Msg("cannot start shard child")
		w.metrics.childExits.Inc()
		return
	}
	w.metrics.childrenRunning.Inc()
	defer w.metrics.childrenRunning.Dec()
	log.Info().Int("pid", c.PID()).Msg("shard child started")
	select {
	case <-c.Done():
		if ctx.Err() != nil { // exited as the leadership ended (a paused daemon resumes to both)
			log.Info().Int("pid", c.PID()).Int("exit_status", c.ExitCode()).Msg("shard child exited; its leadership ended, so it is not restarted")
			break
		}
		log.Warn().Int("pid", c.PID()).Int("exit_status", c.ExitCode()).
			Dur("restart_in", childRestartBackoff).Msg("shard child exited while leading; restarting it if the shard is still led by then")
	case <-ctx.Done():
		w.stopping.begin(shard, c.PID())
		c.Stop(syscall.SIGTERM, w.grace)
		w.stopping.end(c.PID())
		log.Info().Int("pid", c.PID()).Int("exit_status", c.ExitCode()).Msg("shard child stopped")
	}
	w.metrics.childExits.Inc()
}

// EnvShard names the shard in a shards daemon's child environment.
const EnvShard = "ZKELECT_SHARD"
