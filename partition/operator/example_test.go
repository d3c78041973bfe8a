package operator_test

import (
	"context"
	"fmt"
	"time"

	"github.com/zkelect/zkelect/partition/operator"
	"github.com/zkelect/zkelect/recipe"
)

// Draining a member for maintenance, moving one shard, then cancelling a
// move that is no longer wanted. sess is any session on the ensemble with
// the rights the root's ACL asks for.
func Example() {
	ctx := context.Background()
	var sess *recipe.Session // recipe.NewSession(...)
	op, err := operator.New(sess, "/apps/billing", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := op.Drain(ctx, "node-c", "kernel upgrade"); err != nil {
		fmt.Println(err)
		return
	}
	if err := op.WaitDrained(ctx, "node-c"); err != nil { // node-c leads nothing now
		fmt.Println(err)
		return
	}
	_, _ = op.Freeze(ctx, "ZooKeeper rolling restart", 30*time.Minute)
	_, _ = op.Move(ctx, "7", "node-b") // one graceful handoff
	_, _ = op.Unmove(ctx, "7")         // changed our mind: the balance decides again
}
