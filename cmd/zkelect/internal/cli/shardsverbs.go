package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/operator"
)

// This file holds `zkelect shards <verb>`: the operator's changes to a
// root's state in ZooKeeper (package partition/operator), which every member
// follows. Each verb is idempotent and prints what it changed.

// verbFlags are the flags every verb shares.
type verbFlags struct {
	common  commonFlags
	root    string
	timeout time.Duration
}

// verb is one operator verb: run applies it and returns what to print.
type verb struct {
	use, short, long, example string
	flags                     func(fs *pflag.FlagSet)
	check                     func() error
	run                       func(ctx context.Context, op *operator.Operator) (changed bool, what string, err error)
}

// addShardsVerbs adds the operator verbs to the shards command.
func addShardsVerbs(shards *cobra.Command) {
	for _, v := range []func() verb{drainVerb, undrainVerb, freezeVerb, unfreezeVerb, moveVerb, unmoveVerb, pinVerb, unpinVerb, weightVerb, migrateVerb} {
		shards.AddCommand(newVerbCmd(v))
	}
}

func newVerbCmd(build func() verb) *cobra.Command {
	f := &verbFlags{}
	v := build()
	cmd := &cobra.Command{
		Use: v.use, Short: v.short, Long: v.long, Example: v.example, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(v.check); err != nil {
				return err
			}
			return runVerb(cmd, f, v)
		},
	}
	f.common.registerWithLevel(cmd.Flags(), "error")
	f.common.registerACL(cmd.Flags())
	cmd.Flags().StringVar(&f.root, "root", "", "partition root of the shards deployment, e.g. /apps/billing (required)")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 5*time.Minute, "give up after this long: waiting with --wait, or for ZooKeeper while cut off from it")
	if v.flags != nil {
		v.flags(cmd.Flags())
	}
	return cmd
}

func (f *verbFlags) validate(check func() error) error {
	if err := f.common.validate(); err != nil {
		return err
	}
	if err := checkZNodePath("root", f.root); err != nil {
		return err
	}
	if f.timeout <= 0 {
		return fmt.Errorf("invalid --timeout %s: must be positive (e.g. 5m)", f.timeout)
	}
	if check != nil {
		return check()
	}
	return nil
}

func runVerb(cmd *cobra.Command, f *verbFlags, v verb) error {
	c, err := f.common.dial(cmd)
	if err != nil {
		return err
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(c.ctx, f.timeout)
	defer cancel()
	if err := checkIsRoot(ctx, c.sess, f.root); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w: gave up after --timeout %s", err, f.timeout)
		}
		return err
	}
	acl, err := f.common.znodeACL()
	if err != nil {
		return err
	}
	op, err := operator.New(c.sess, f.root, acl)
	if err != nil {
		return err
	}
	changed, what, err := v.run(ctx, op)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: gave up after --timeout %s", what, f.timeout)
	}
	if err != nil {
		return err
	}
	if !changed {
		what += " (already so: nothing changed)"
	}
	fmt.Fprintln(cmd.OutOrStdout(), what)
	return nil
}

// needID returns a check that flag's value is a valid id.
func needID(flag string, v *string) func() error {
	return func() error {
		if *v == "" {
			return fmt.Errorf("missing --%s", flag)
		}
		if err := partition.ValidateID(*v); err != nil {
			return fmt.Errorf("invalid --%s %q: %w", flag, *v, err)
		}
		return nil
	}
}

// both runs every check.
func allOf(checks ...func() error) func() error {
	return func() error {
		for _, c := range checks {
			if err := c(); err != nil {
				return err
			}
		}
		return nil
	}
}

func drainVerb() verb {
	var member, reason string
	var wait bool
	return verb{
		use:   "drain --root ROOT --member M [--reason TEXT] [--wait]",
		short: "Hand every shard of a member away; it keeps running and takes none",
		long: `Drain a member: every member's assignment gives its shards to the others, and it
hands them away through the normal graceful handoff (throttled by
--max-handoffs). It keeps its session and stays registered. With --wait, return
once it leads nothing. Refused for a member that is not live, and for the last
live member that is not drained. Undo with undrain.`,
		example: `  zkelect shards drain --zk 127.0.0.1:2181 --root /apps/billing --member node-c --reason "kernel upgrade" --wait`,
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&member, "member", "", "member to drain (required)")
			fs.StringVar(&reason, "reason", "", "why, shown by status")
			fs.BoolVar(&wait, "wait", false, "return once the member leads nothing")
		},
		check: needID("member", &member),
		run: func(ctx context.Context, op *operator.Operator) (bool, string, error) {
			what := "drained member " + member
			changed, err := op.Drain(ctx, member, reason)
			if err != nil || !wait {
				return changed, what, err
			}
			if err := op.WaitDrained(ctx, member); err != nil {
				return changed, what + ", waiting for it to lead nothing", err
			}
			return changed, what + "; it leads nothing now", nil
		},
	}
}

func undrainVerb() verb {
	var member string
	return verb{
		use:     "undrain --root ROOT --member M",
		short:   "Give a drained member its share of the shards again",
		long:    `Undrain a member: it takes its share again, from the members holding the most; nobody else moves.`,
		example: `  zkelect shards undrain --zk 127.0.0.1:2181 --root /apps/billing --member node-c`,
		flags:   func(fs *pflag.FlagSet) { fs.StringVar(&member, "member", "", "member to undrain (required)") },
		check:   needID("member", &member),
		run: func(ctx context.Context, op *operator.Operator) (bool, string, error) {
			changed, err := op.Undrain(ctx, member)
			return changed, "undrained member " + member, err
		},
	}
}

func freezeVerb() verb {
	var reason string
	var d time.Duration
	return verb{
		use:   "freeze --root ROOT [--for 30m] [--reason TEXT]",
		short: "Maintenance mode: no balancing moves; crashed members' shards still taken over",
		long: `Freeze the root: no balancing move starts (a member joining takes nothing, a weight
change moves nothing), while the shards of a member that left are still led
again at once (availability first). Moves and pins still apply. With --for the
freeze lifts itself after that long (members compare with their own clocks).
status shows the freeze and its reason; members log it. Undo with unfreeze.`,
		example: `  zkelect shards freeze --zk 127.0.0.1:2181 --root /apps/billing --for 30m --reason "ZooKeeper rolling restart"`,
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&reason, "reason", "", "why, shown by status and logged by members")
			fs.DurationVar(&d, "for", 0, "lift the freeze by itself after this long (0: until unfreeze)")
		},
		check: func() error {
			if d < 0 {
				return fmt.Errorf("invalid --for %s: must not be negative (e.g. 30m)", d)
			}
			return nil
		},
		run: func(ctx context.Context, op *operator.Operator) (bool, string, error) {
			what := "froze rebalancing"
			if d > 0 {
				what += " for " + d.String()
			}
			changed, err := op.Freeze(ctx, reason, d)
			return changed, what, err
		},
	}
}

func unfreezeVerb() verb {
	return verb{
		use:     "unfreeze --root ROOT",
		short:   "End the maintenance mode: balancing resumes",
		long:    `Unfreeze the root: the balance resumes, moving what the shares need.`,
		example: `  zkelect shards unfreeze --zk 127.0.0.1:2181 --root /apps/billing`,
		run: func(ctx context.Context, op *operator.Operator) (bool, string, error) {
			changed, err := op.Unfreeze(ctx)
			return changed, "unfroze rebalancing", err
		},
	}
}

func moveVerb() verb {
	var shard, to string
	var wait bool
	return verb{
		use:   "move --root ROOT --shard S --to M [--wait]",
		short: "Hand one shard to a member with one graceful handoff",
		long: `Move a shard: its leader's work is drained and its OnStoppedLeading returns before
the new member's starts (the --exec child is stopped before the new one starts).
The move holds like a pin until the member leads the shard and the balance keeps
it there without it (the member gives another shard away if it is over its
share); the member then clears it and the shard is free to rebalance. With
--wait (the default) return once done. Refused for a member that is not live,
is drained or runs another shard list, a shard without an election, and a
shard pinned elsewhere. A move expires when its member leaves or is drained
first; pin, unpin and unmove cancel it, and so does a move to the member that
leads the shard.`,
		example: `  zkelect shards move --zk 127.0.0.1:2181 --root /apps/billing --shard 7 --to node-c`,
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&shard, "shard", "", "shard to move (required)")
			fs.StringVar(&to, "to", "", "member to move it to (required)")
			fs.BoolVar(&wait, "wait", true, "return once the member leads the shard")
		},
		check: allOf(needID("shard", &shard), needID("to", &to)),
		run: func(ctx context.Context, op *operator.Operator) (bool, string, error) {
			what := fmt.Sprintf("moved shard %s to %s", shard, to)
			changed, err := op.Move(ctx, shard, to)
			if err != nil || !changed || !wait {
				return changed, what, err
			}
			if err := op.WaitMoved(ctx, shard, to); err != nil {
				return changed, what + ", waiting for it to lead", err
			}
			return changed, what + "; it leads it now", nil
		},
	}
}

func unmoveVerb() verb {
	var shard string
	return verb{
		use:     "unmove --root ROOT --shard S",
		short:   "Cancel a shard's move",
		long:    `Cancel a move: the shard stays with whoever leads it while within its share, as if the move had never been asked for.`,
		example: `  zkelect shards unmove --zk 127.0.0.1:2181 --root /apps/billing --shard 7`,
		flags:   func(fs *pflag.FlagSet) { fs.StringVar(&shard, "shard", "", "shard whose move to cancel (required)") },
		check:   needID("shard", &shard),
		run: func(ctx context.Context, op *operator.Operator) (bool, string, error) {
			changed, err := op.Unmove(ctx, shard)
			return changed, "cancelled the move of shard " + shard, err
		},
	}
}

func pinVerb() verb {
	var shard, to string
	return verb{
		use:   "pin --root ROOT --shard S --to M",
		short: "Keep a shard on a member while it is live and not drained",
		long: `Pin a shard: it is moved to the member (one graceful handoff) and kept there while
the member is live and not drained, counted in its share. It cancels a move of the shard. Refused as move is.
Undo with unpin.`,
		example: `  zkelect shards pin --zk 127.0.0.1:2181 --root /apps/billing --shard eu --to node-a`,
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&shard, "shard", "", "shard to pin (required)")
			fs.StringVar(&to, "to", "", "member to pin it to (required)")
		},
		check: allOf(needID("shard", &shard), needID("to", &to)),
		run: func(ctx context.Context, op *operator.Operator) (bool, string, error) {
			changed, err := op.Pin(ctx, shard, to)
			return changed, fmt.Sprintf("pinned shard %s to %s", shard, to), err
		},
	}
}

func unpinVerb() verb {
	var shard string
	return verb{
		use:     "unpin --root ROOT --shard S",
		short:   "Free a pinned shard to rebalance",
		long:    `Unpin a shard (and cancel a move of it): its leader keeps it while within its share.`,
		example: `  zkelect shards unpin --zk 127.0.0.1:2181 --root /apps/billing --shard eu`,
		flags:   func(fs *pflag.FlagSet) { fs.StringVar(&shard, "shard", "", "shard to unpin (required)") },
		check:   needID("shard", &shard),
		run: func(ctx context.Context, op *operator.Operator) (bool, string, error) {
			changed, err := op.Unpin(ctx, shard)
			return changed, "unpinned shard " + shard, err
		},
	}
}

func weightVerb() verb {
	var member string
	var w int
	var reset bool
	return verb{
		use:   "weight --root ROOT --member M (--weight W | --reset)",
		short: "Set a member's weight: its share of the shards",
		long: fmt.Sprintf(`Set a member's weight (1..%d), overriding the --weight it runs with: in steady
state no member leads more than ceil(S*w/sum of weights) of S shards. Only the
shards the new shares need move. --reset drops the override.`, partition.MaxWeight),
		example: `  zkelect shards weight --zk 127.0.0.1:2181 --root /apps/billing --member node-big --weight 3`,
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&member, "member", "", "member (required)")
			fs.IntVar(&w, "weight", 0, "its weight (required unless --reset)")
			fs.BoolVar(&reset, "reset", false, "drop the operator's weight: the member's own --weight applies")
		},
		check: allOf(needID("member", &member), func() error {
			if !reset && (w <= 0 || w > partition.MaxWeight) {
				return fmt.Errorf("invalid --weight %d: want 1..%d (or --reset)", w, partition.MaxWeight)
			}
			return nil
		}),
		run: func(ctx context.Context, op *operator.Operator) (bool, string, error) {
			if reset {
				changed, err := op.ResetWeight(ctx, member)
				return changed, "reset the weight of member " + member, err
			}
			changed, err := op.SetWeight(ctx, member, w)
			return changed, fmt.Sprintf("set the weight of member %s to %d", member, w), err
		},
	}
}
