package zkelecthttp_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/zkelecthttp"
)

// verdicts records what OnReadiness was told.
type verdicts struct {
	mu  sync.Mutex
	all []bool
}

func (v *verdicts) record(ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.all = append(v.all, ok)
}

// last returns the latest verdict and how many came.
func (v *verdicts) last() (ok bool, n int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.all) == 0 {
		return false, 0
	}
	return v.all[len(v.all)-1], len(v.all)
}

// TestReadinessFollowsTheMemberWithoutProbes: with nothing requesting
// /readyz, OnReadiness (the daemon's zkelect_daemon_ready) turns true once
// the member has balanced, false once the member has left (its znode gone
// with the stopped Manager), and false for good on Drain. It was told only
// what /readyz requests computed, so it stayed false in a healthy run.
func TestReadinessFollowsTheMemberWithoutProbes(t *testing.T) {
	root := testPath(t)
	sess := connect(t, zkc.Addrs())
	mgr, err := partition.NewManager(sess, root, partition.Config{MemberID: "m1", Shards: partition.Range(0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	mctx, stopMember := context.WithCancel(context.Background())
	mdone := make(chan error, 1)
	go func() { mdone <- mgr.Run(mctx) }()
	defer func() { stopMember(); <-mdone }()
	v := &verdicts{}
	api, err := zkelecthttp.NewShards(sess, mgr, zkelecthttp.ShardsOptions{Root: root, Member: "m1", OnReadiness: v.record})
	if err != nil {
		t.Fatal(err)
	}
	runShards(t, api)

	eventually(t, 30*time.Second, "OnReadiness told ready, with no /readyz request", func() bool {
		ok, _ := v.last()
		return ok
	})
	stopMember()
	if err := <-mdone; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Manager.Run: %v", err)
	}
	mdone <- nil // for the deferred stop
	eventually(t, 30*time.Second, "OnReadiness told not ready once the member left, with no /readyz request", func() bool {
		ok, n := v.last()
		return n > 0 && !ok
	})
	api.Drain()
	if ok, _ := v.last(); ok {
		t.Error("the verdict after Drain says ready")
	}
}
