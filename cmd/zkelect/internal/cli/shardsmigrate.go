package cli

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/zkelect/zkelect/partition/operator"
)

// migrateVerb is `zkelect shards migrate`: a flat root's move to buckets
// (operator.MigrateToBuckets).
func migrateVerb() verb {
	var wait bool
	return verb{
		use:   "migrate --root ROOT [--wait]",
		short: "Move a flat root's shard elections to buckets while its members run",
		long: `Move a root made by a release before buckets (its elections at <root>/shards/<id>,
one listing of every id) to buckets (<root>/buckets/<bucket>/<id>) while its
members run: each shard's leader ends its flat leadership (OnStoppedLeading,
reason "the root moves to buckets") and the shard is led in its bucket, with a
larger token; no shard has two leaders on the way. Refused while a live member
is of a release before it (upgrade every member first, one at a time) and when
these credentials may not change <root>/shards' ACL. With --wait, return once
every shard's election is in its bucket.`,
		example: `  zkelect shards migrate --zk 127.0.0.1:2181 --root /apps/billing --wait`,
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&wait, "wait", false, "return once every shard's election is in its bucket")
		},
		run: func(ctx context.Context, op *operator.Operator) (bool, string, error) {
			what := "moving the root's shard elections to buckets"
			changed, err := op.MigrateToBuckets(ctx)
			if err != nil || !wait {
				return changed, what, err
			}
			if err := op.WaitMigrated(ctx); err != nil {
				return changed, what + ", waiting for the last flat election to go", err
			}
			return changed, "moved the root's shard elections to buckets", nil
		},
	}
}
