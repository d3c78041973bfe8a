package recipe_test

import (
	"context"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
)

// TestOnWaitingFiresOnceQueuedBehindALeader: a candidate made with
// WithOnWaiting whose campaign queues behind a sitting leader calls its
// hook while Campaign is still blocked (every request of the campaign
// answered: its znode is there, behind the leader's), and leads once the
// leader resigns. The partition manager gives a campaign's start slot
// back on it.
func TestOnWaitingFiresOnceQueuedBehindALeader(t *testing.T) {
	path := electionPath(t)
	s := session(t, zkc.ConnectString())
	raw := rawConn(t, zkc.ConnectString())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	leader := candidate(t, s, path)
	lead := awaitResult(t, campaignAsync(ctx, leader), "the leader's Campaign")
	if lead.err != nil {
		t.Fatalf("leader's campaign: %v", lead.err)
	}
	waiting := make(chan struct{}, 4)
	standby := candidate(t, s, path, recipe.WithOnWaiting(func() { waiting <- struct{}{} }))
	result := campaignAsync(ctx, standby)
	select {
	case <-waiting:
	case r := <-result:
		t.Fatalf("the standby's Campaign returned (%v) while the leader leads", r.err)
	case <-time.After(wait):
		t.Fatalf("WithOnWaiting's hook not called within %v of a campaign behind a sitting leader", wait)
	}
	if n := len(children(t, raw, path)); n != 2 {
		t.Fatalf("%d znodes in the election when the hook fired, want 2 (the leader's and the standby's)", n)
	}
	rctx, rcancel := context.WithTimeout(ctx, wait)
	defer rcancel()
	if err := lead.lead.Resign(rctx); err != nil {
		t.Fatalf("resign: %v", err)
	}
	if r := awaitResult(t, result, "the standby's Campaign"); r.err != nil {
		t.Fatalf("standby's campaign after the resign: %v", r.err)
	}
}
