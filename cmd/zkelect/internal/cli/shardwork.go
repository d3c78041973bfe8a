package cli

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/recipe/watchdog"
	"github.com/zkelect/zkelect/zkelecthttp"
	"github.com/zkelect/zkelect/zxidfence"
)

// childRestartBackoff is how long a shard's child waits before it is started
// again after exiting while its shard is still led.
const childRestartBackoff = time.Second

// shardWork runs the per-shard work of a shards daemon: it records every
// leadership this member holds and, with --exec, supervises one child per
// led shard.
type shardWork struct {
	member  string
	root    string
	tmpl    execTemplate
	grace   time.Duration
	log     zerolog.Logger
	metrics *daemonMetrics
	// watchdog guards each child's process group (nil: none); set before
	// the first leadership.
	watchdog *watchdog.Process

	held     zkelecthttp.Leaderships // for /v1/leaderships
	stopping stops                   // children whose leadership ended, until reaped
}

// overdueStop returns a child still running longer than d after its
// leadership ended, if any.
func (w *shardWork) overdueStop(d time.Duration) (stoppingChild, bool) { return w.stopping.overdue(d) }

func newShardWork(member, root string, tmpl execTemplate, grace time.Duration, log zerolog.Logger, m *daemonMetrics) *shardWork {
	return &shardWork{
		member: member, root: root, tmpl: tmpl, grace: grace, log: log, metrics: m,
	}
}

// lead holds shard until ctx is done: it records the leadership and runs the
// shard's child (if any), restarting it when it exits, and stops it (SIGTERM,
// then SIGKILL after grace) when ctx is done. It returns once the child has
// exited.
func (w *shardWork) lead(ctx context.Context, shard string, token zxidfence.Token) {
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
func (w *shardWork) runChild(ctx context.Context, log zerolog.Logger, shard string, token zxidfence.Token) {
	argv := w.tmpl.argv(shard, token)
	env := []string{
		envFencingToken + "=" + token.Decimal(),
		envElection + "=" + shardElectionPath(w.root, shard),
		envParticipantID + "=" + w.member,
		envShard + "=" + shard,
	}
	if lead, ok := recipe.LeadershipFrom(ctx); ok {
		env = append(env, envZnode+"="+lead.Znode(), envZnodeVersion+"="+strconv.Itoa(int(lead.Version())))
	}
	c, err := startChild(childSpec{
		Path: argv[0], Args: argv[1:],
		Env:    env,
		Stdout: os.Stdout, Stderr: os.Stderr,
		Watchdog: w.watchdog,
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

// envShard names the shard in a shards daemon's child environment.
const envShard = "ZKELECT_SHARD"

// shardElectionPath is the election path of one shard under root.
func shardElectionPath(root, shard string) string { return root + "/shards/" + shard }
