package main

import (
	"context"
	"os"
	"path"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/recipe/watchdog"
	"github.com/zkelect/zkelect/zxidfence"
)

// childRestartBackoff is how long a shard's child waits before it is started
// again after exiting while its shard is still led.
const childRestartBackoff = time.Second

// leadershipView is one leadership as /v1/leaderships reports it.
type leadershipView struct {
	Shard        string    `json:"shard"`
	Member       string    `json:"member"`
	Token        string    `json:"token"`         // decimal zxid, as in ZKELECT_FENCING_TOKEN
	TokenHex     string    `json:"token_hex"`     // e.g. 0x100000005
	EpochCounter string    `json:"epoch_counter"` // e.g. 1:5
	Since        time.Time `json:"since"`
}

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

	mu       sync.Mutex
	held     map[string]leadershipView
	stopping stops // children whose leadership ended, until reaped
}

// overdueStop returns a child still running longer than d after its
// leadership ended, if any.
func (w *shardWork) overdueStop(d time.Duration) (stoppingChild, bool) { return w.stopping.overdue(d) }

func newShardWork(member, root string, tmpl execTemplate, grace time.Duration, log zerolog.Logger, m *daemonMetrics) *shardWork {
	return &shardWork{
		member: member, root: root, tmpl: tmpl, grace: grace, log: log, metrics: m,
		held: make(map[string]leadershipView),
	}
}

// List returns the leaderships held now, ordered by shard.
func (w *shardWork) List() []leadershipView {
	w.mu.Lock()
	out := make([]leadershipView, 0, len(w.held))
	for _, v := range w.held {
		out = append(out, v)
	}
	w.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return shardLess(out[i].Shard, out[j].Shard) })
	return out
}

// lead holds shard until ctx is done: it records the leadership and runs the
// shard's child (if any), restarting it when it exits, and stops it (SIGTERM,
// then SIGKILL after grace) when ctx is done. It returns once the child has
// exited.
func (w *shardWork) lead(ctx context.Context, shard string, token zxidfence.Token) {
	w.mu.Lock()
	w.held[shard] = leadershipView{
		Shard: shard, Member: w.member, Token: token.Decimal(), TokenHex: token.Hex(),
		EpochCounter: token.EpochCounter(), Since: time.Now().UTC(),
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.held, shard)
		w.mu.Unlock()
	}()
	if w.tmpl == "" {
		<-ctx.Done()
		return
	}
	log := w.log.With().Str("shard", shard).Stringer("token", token).Logger()
	for ctx.Err() == nil {
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
		envParticipantID + "=" + w.member,
		envShard + "=" + shard,
	}
	if lead, ok := recipe.LeadershipFrom(ctx); ok { // the election is the parent of the leader's znode, in the root's layout
		env = append(env, envElection+"="+path.Dir(lead.Znode()), envZnode+"="+lead.Znode(), envZnodeVersion+"="+strconv.Itoa(int(lead.Version())))
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
		log.Warn().Int("pid", c.PID()).Int("exit_status", c.ExitCode()).Msg("shard child exited while leading; restarting it")
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
