package recipe_test

import (
	"context"
	"log"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// Run a singleton job: lead, work while leading with the fencing token,
// campaign again after a loss, withdraw on the way out.
func ExampleRun() {
	ctx := context.Background()
	sess, err := recipe.Connect(ctx, []string{"127.0.0.1:2181"}, recipe.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	cand, err := recipe.NewCandidate(sess, "/services/report/leader", recipe.WithParticipantID("node-a"))
	if err != nil {
		log.Fatal(err)
	}
	defer cand.Close()
	err = recipe.Run(ctx, cand, func(ctx context.Context, token zxidfence.Token) error {
		log.Printf("leading with token %v", token)
		<-ctx.Done() // work until leadership ends; pass token to every write
		return nil
	})
	log.Print(err)
}

// Campaign once and watch for the end of the leadership.
func ExampleCandidate_Campaign() {
	ctx := context.Background()
	sess, err := recipe.Connect(ctx, []string{"127.0.0.1:2181"})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	cand, err := recipe.NewCandidate(sess, "/services/report/leader",
		recipe.WithConnectionLossPolicy(recipe.TolerateSuspend(3*time.Second)))
	if err != nil {
		log.Fatal(err)
	}
	defer cand.Close()
	lead, err := cand.Campaign(ctx)
	if err != nil {
		log.Fatal(err)
	}
	<-lead.Done()
	log.Printf("leadership with token %v ended: %v", lead.Token(), lead.Err())
}
