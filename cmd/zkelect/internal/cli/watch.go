package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

func newWatchCmd() *cobra.Command {
	f := &targetFlags{}
	const outputs = "text|json"
	cmd := &cobra.Command{
		Use:   "watch (--election PATH | --root ROOT) [-o text|json]",
		Short: "Print leadership changes as they happen, one line each",
		Long: `Print the current leader, then one line per leadership change (including "no
leader"), until interrupted. For a partition root, every shard that exists
when watch starts is followed, and so are its members (joining with their address
and weight, leaving), drains, the freeze, pins, moves and weights; a root with no
shards yet is waited for (said once on stderr, and through a cut from ZooKeeper),
so watch may start before the fleet. -o json prints JSON lines.`,
		Example: `  zkelect watch --zk 127.0.0.1:2181 --election /apps/cron/leader
  zkelect watch --zk 127.0.0.1:2181 --root /apps/billing -o json | jq .`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(outputs); err != nil {
				return err
			}
			return runWatch(cmd, f)
		},
	}
	f.register(cmd, outputs)
	return cmd
}

// watchTarget is one election followed by watch; shard is "" for --election.
type watchTarget struct{ path, shard string }

func runWatch(cmd *cobra.Command, f *targetFlags) error {
	c, err := f.common.dial(cmd)
	if err != nil {
		return err
	}
	defer c.close()
	ctx, log, sess := c.ctx, c.log, c.sess
	targets := []watchTarget{{path: f.election}}
	if f.root != "" {
		if targets, err = awaitShardTargets(ctx, cmd.ErrOrStderr(), sess, f.root, f.common.sessionTimeout, log); err != nil {
			if ctx.Err() != nil {
				return nil // interrupted while waiting for the root
			}
			return err
		}
	}
	p := newWatchPrinter(cmd.OutOrStdout(), f.output)
	if f.root == "" {
		return watchAll(ctx, sess, targets, p, log)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Add(1)
	go func() { defer wg.Done(); watchRoot(wctx, sess, f.root, p, log) }()
	return watchAll(ctx, sess, targets, p, log)
}

// awaitShardTargets lists the shards of a partition root, waiting (and
// saying so once on stderr) while it has none: watch may start before the
// fleet. Cut off from ZooKeeper meanwhile (connection loss, the session
// expired and replaced; cutOff), even past the session timeout, it keeps
// waiting and reads again once the session connects. It returns ctx's
// error if interrupted, and other errors (an ACL, the session closed or
// ended for good) as they come.
func awaitShardTargets(ctx context.Context, stderr io.Writer, sess *recipe.Session, root string, timeout time.Duration, log zerolog.Logger) ([]watchTarget, error) {
	var seen []string // the member records under <root>/owners at the last look
	var b retry.Backoff
	for said := false; ; {
		next := sess.NextConnect()
		targets, err := shardTargets(ctx, sess, root, timeout)
		if err == nil && len(targets) > 0 {
			return targets, nil
		}
		if err == nil {
			if !said {
				fmt.Fprintf(stderr, "partition root %s has no shards yet: waiting for a shards daemon to start there\n", root)
				said = true
			}
			seen, err = awaitRecords(ctx, sess, root+"/owners", seen)
		}
		switch {
		case err == nil:
			b.Reset()
		case ctx.Err() != nil || !cutOff(ctx, sess, err):
			return nil, err
		default:
			log.Debug().Err(err).Str("root", root).Msg("waiting for the root's shards; again once connected")
			if !b.WaitOr(ctx, next) {
				return nil, ctx.Err()
			}
		}
	}
}

// shardTargets lists the shards of a partition root: none when it has no
// shards (or does not exist).
func shardTargets(ctx context.Context, sess *recipe.Session, root string, timeout time.Duration) ([]watchTarget, error) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	owners, err := partition.Owners(rctx, sess, root)
	if err != nil {
		return nil, fmt.Errorf("read partition root %s: %w", root, err)
	}
	out := make([]watchTarget, 0, len(owners))
	for _, s := range sortedShards(owners) {
		out = append(out, watchTarget{path: owners[s].Election, shard: s})
	}
	return out, nil
}

// watchAll follows every target until ctx is done, printing each
// observation. Observations of one target print in order.
func watchAll(ctx context.Context, sess *recipe.Session, targets []watchTarget, p *watchPrinter, log zerolog.Logger) error {
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			blind := false // the last line printed said the leader is unknown
			for obs := range recipe.Observe(ctx, sess, t.path) {
				if obs.Err != nil {
					log.Warn().Err(obs.Err).Str("election", t.path).Msg("cannot read election; retrying")
					if !blind {
						p.print(t, obs)
					}
					blind = true
					continue
				}
				blind = false
				p.print(t, obs)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("stopped watching: the elections cannot be read (see the log above)")
}

// watchLine is one observation as -o json prints it.
type watchLine struct {
	Time     time.Time  `json:"time"`
	Election string     `json:"election"`
	Shard    string     `json:"shard,omitempty"`
	Leader   *string    `json:"leader"` // null when nobody leads, or unknown
	Token    *tokenJSON `json:"token"`
	Error    string     `json:"error,omitempty"` // why the leader is unknown (e.g. connection lost)
}

func (p *watchPrinter) print(t watchTarget, obs recipe.Observation) {
	line := watchLine{Time: time.Now().UTC(), Election: t.path, Shard: t.shard}
	if obs.Err != nil {
		line.Error = obs.Err.Error()
	} else if obs.HasLeader {
		id, tok := obs.Leader.ID, newTokenJSON(obs.Leader.Token)
		line.Leader, line.Token = &id, &tok
	}
	what := t.path
	if t.shard != "" {
		what = "shard=" + t.shard
	}
	text := line.Time.Format("15:04:05.000") + " " + what
	switch {
	case obs.Err != nil:
		text += fmt.Sprintf(" leader unknown: %v (retrying)", obs.Err)
	case !obs.HasLeader:
		text += " no leader"
	default:
		text += fmt.Sprintf(" leader=%s token=%s", obs.Leader.ID, tokenText(obs.Leader.Token))
	}
	p.emit(line, text)
}
