package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/zkelect/zkelect/recipe"
)

func TestManyElectionsShareOneSessionThroughAConnectionLoss(t *testing.T) {
	const n = 500
	root := electionPath(t)
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	cands := make([]*recipe.Candidate, n)
	leads := make([]*recipe.Leadership, n)
	campaignAll := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range cands {
			wg.Go(func() { leads[i], errs[i] = cands[i].Campaign(ctx) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	for i := range cands {
		cands[i] = candidate(t, s, fmt.Sprintf("%s/shard-%03d", root, i))
	}
	campaignAll()
	before := append([]*recipe.Leadership(nil), leads...)

	// One connection loss reaches every election: all suspend, then all
	// lead again on the same znodes with the same tokens.
	p.Cut()
	for i, l := range before {
		if err := awaitEnd(t, l, "suspension of every leadership"); !errors.Is(err, recipe.ErrSuspended) {
			t.Fatalf("election %d ended with %v", i, err)
		}
	}
	campaignAll()
	for i, l := range leads {
		if l == before[i] || l.Token() != before[i].Token() {
			t.Fatalf("election %d: token %v after %v", i, l.Token(), before[i].Token())
		}
	}
}
