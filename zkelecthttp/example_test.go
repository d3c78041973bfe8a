package zkelecthttp_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zkelecthttp"
	"github.com/zkelect/zkelect/zxidfence"
)

// A partition member serves the daemon's /healthz, /readyz,
// /v1/leaderships, /v1/owners and /v1/watch beside its own handlers.
func Example() {
	ctx := context.Background()
	sess, err := recipe.Connect(ctx, []string{"127.0.0.1:2181"}, recipe.WithSessionTimeout(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	var held zkelecthttp.Leaderships // what /v1/leaderships lists, with since
	shards := partition.Range(0, 64)
	mgr, err := partition.NewManager(sess, "/apps/billing", partition.Config{
		MemberID: "node-a",
		Shards:   shards,
		OnStartedLeading: func(ctx context.Context, shard string, token zxidfence.Token) {
			defer held.Hold(shard, "node-a", token)()
			<-ctx.Done() // the shard's work, until the leadership ends
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	api, err := zkelecthttp.NewShards(sess, mgr, zkelecthttp.ShardsOptions{
		Root: "/apps/billing", Member: "node-a", Shards: shards, Leaderships: &held,
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Register(mux) // beside the service's own handlers
	go func() { log.Print(zkelecthttp.NewServer(mux).ListenAndServe()) }()
	go func() { log.Print(api.Run(ctx)) }() // follows the root for /v1/owners and /v1/watch
	if err := mgr.Run(ctx); err != nil {
		log.Fatal(err)
	}
}

// A program with recipe alone serves its session's health and its
// candidates' leaderships.
func ExampleElections() {
	ctx := context.Background()
	sess, err := recipe.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	cand, err := recipe.NewCandidate(sess, "/apps/cron/leader")
	if err != nil {
		log.Fatal(err)
	}
	defer cand.Close()
	mux := http.NewServeMux()
	zkelecthttp.NewElections(sess, []*recipe.Candidate{cand}).Register(mux)
	go func() { log.Print(zkelecthttp.NewServer(mux).ListenAndServe()) }()
	_ = recipe.Run(ctx, cand, func(ctx context.Context, _ zxidfence.Token) error {
		<-ctx.Done()
		return nil
	})
}
