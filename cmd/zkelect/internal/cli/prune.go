package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zkelect/zkelect/partition/operator"
)

type pruneFlags struct {
	common commonFlags
	root   string
	shards string
	dryRun bool
}

func newPruneCmd() *cobra.Command {
	f := &pruneFlags{}
	cmd := &cobra.Command{
		Use:   "prune --root ROOT --shards N|LIST [--dry-run]",
		Short: "Remove the shard elections of a partition root that no live member runs",
		Long: `Delete the elections (in ROOT/buckets, or ROOT/shards in a flat root of an
older release) of every shard not in --shards (the list
the live members run): those a daemon started by mistake with a longer list
left behind, which stay unled and show in status as "8 of 16 shards".

It refuses, naming the member, while any live member runs another list (or has
not published its list yet), and it deletes only empty elections: one holding a
candidate is kept and named. --dry-run lists what it would delete.`,
		Example: `  zkelect prune --zk 127.0.0.1:2181 --root /apps/billing --shards 8 --dry-run
  zkelect prune --zk 127.0.0.1:2181 --root /apps/billing --shards 8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			shards, err := f.validate()
			if err != nil {
				return err
			}
			return runPrune(cmd, f, shards)
		},
	}
	f.common.registerWithLevel(cmd.Flags(), "error")
	fs := cmd.Flags()
	fs.StringVar(&f.root, "root", "", "partition root, e.g. /apps/billing (required)")
	fs.StringVar(&f.shards, "shards", "", `the shard count N or list the live members run, as given to zkelect shards (required)`)
	fs.BoolVar(&f.dryRun, "dry-run", false, "list the elections that would be deleted, delete nothing")
	return cmd
}

func (f *pruneFlags) validate() ([]string, error) {
	if err := f.common.validate(); err != nil {
		return nil, err
	}
	if err := checkZNodePath("root", f.root); err != nil {
		return nil, err
	}
	return parseShards(f.shards)
}

func runPrune(cmd *cobra.Command, f *pruneFlags, shards []string) error {
	c, err := f.common.dial(cmd)
	if err != nil {
		return err
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(c.ctx, 10*f.common.sessionTimeout)
	defer cancel()
	deleted, kept, err := operator.Prune(ctx, c.sess, f.root, shards, f.dryRun)
	if errors.Is(err, operator.ErrPruneRefused) {
		return fmt.Errorf("%v; nothing deleted", err)
	}
	if err != nil {
		return fmt.Errorf("prune %s: %w", f.root, err)
	}
	out := cmd.OutOrStdout()
	verb := "deleted"
	if f.dryRun {
		verb = "would delete"
	}
	switch {
	case len(deleted) == 0 && len(kept) == 0:
		fmt.Fprintf(out, "nothing to prune: every election under %s is in the list\n", f.root)
	case len(deleted) > 0:
		fmt.Fprintf(out, "%s the elections of %d shards: %s\n", verb, len(deleted), strings.Join(termSafeAll(deleted), ", "))
	}
	if len(kept) > 0 {
		fmt.Fprintf(out, "kept %d elections that hold a candidate: %s\n", len(kept), strings.Join(termSafeAll(kept), ", "))
	}
	return nil
}
