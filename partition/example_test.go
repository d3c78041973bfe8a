package partition_test

import (
	"context"
	"log"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// Each process runs one Manager with its own member id; the shards are
// spread over the live members, and every leader writes with its token
// through a guard, so a deposed leader's late writes are refused.
func Example() {
	ctx := context.Background()
	sess, err := recipe.Connect(ctx, []string{"127.0.0.1:2181"}, recipe.WithSessionTimeout(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	guard := zxidfence.NewMemory() // the resource's guard: SQL, ZooKeeper or HTTP in real use
	m, err := partition.NewManager(sess, "/apps/billing", partition.Config{
		MemberID: "node-a",
		Shards:   partition.Range(0, 256),
		OnStartedLeading: func(ctx context.Context, shard string, token zxidfence.Token) {
			for ctx.Err() == nil { // work until the leadership ends
				_ = guard.Do(ctx, shard, zxidfence.At(token), func(context.Context) error { return nil })
				time.Sleep(time.Second)
			}
		},
		OnStoppedLeading: func(shard string, reason error) { log.Printf("shard %s: %v", shard, reason) },
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Run(ctx); err != nil { // until ctx is done; then resigns everything gracefully
		log.Fatal(err)
	}
}
