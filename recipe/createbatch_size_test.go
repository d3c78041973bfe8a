package recipe_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestBatchedCreatesStayWithinJuteMaxBuffer: election paths up to
// MaxPathBytes and participant ids up to MaxParticipantIDLen are valid, one
// by one; 256 such creates in one multi exceed ZooKeeper's default
// jute.maxbuffer (1 MiB), the server drops the connection instead of
// answering, and every candidate of the batch (and every leader on the
// session) sees connection loss again at each retry.
func TestBatchedCreatesStayWithinJuteMaxBuffer(t *testing.T) {
	// 20 s sessions, on a server of its own that grants them (the shared
	// one caps sessions at 20 ticks, 2 s): a server that drops the
	// connection for a frame over jute.maxbuffer does so at once, while a
	// loaded machine's late sync answers, queued behind 2.4 MB of creates,
	// must not run a 2 s session's lease out and pass for it (seen at
	// load 12-20).
	ens := testenv.New(t, testenv.Options{Servers: 1, MaxSessionTimeout: 20 * time.Second})
	raw := rawConn(t, ens.ConnectString())
	s := session(t, ens.ConnectString(), recipe.WithSessionTimeout(20*time.Second), recipe.WithExactSessionTimeout())
	base := electionPath(t)
	ensurePath(t, raw, base)
	// A leader of another election on the same session, before the batch.
	other := candidate(t, s, base+"/other")
	lead := campaignAll(t, []*recipe.Candidate{other})[0]
	const n = 600
	pad := strings.Repeat("x", 3900)
	id := strings.Repeat("i", recipe.MaxParticipantIDLen)
	cs := make([]*recipe.Candidate, n)
	for i := range cs {
		p := fmt.Sprintf("%s/%s%04d", base, pad, i)
		if len(p) > recipe.MaxPathBytes {
			t.Fatalf("path of %d bytes", len(p))
		}
		ensurePath(t, raw, p)
		cs[i] = candidate(t, s, p, recipe.WithBatchedCreates(), recipe.WithParticipantID(id))
	}
	campaignAll(t, cs)
	if err := lead.Err(); err != nil {
		t.Fatalf("the leader of %s on the same session lost its leadership while its session's batched creates ran: %v", other.Path(), err)
	}
}

// TestBatchedCreatesACLRefusesOne: one election's parent refuses our
// create (NoAuth) in a batch with 50 others: the others still lead, and
// only the refused candidate's Campaign fails.
func TestBatchedCreatesACLRefusesOne(t *testing.T) {
	raw := rawConn(t, zkc.ConnectString())
	s := session(t, zkc.ConnectString())
	base := electionPath(t)
	ensurePath(t, raw, base)
	const n = 51
	cs := make([]*recipe.Candidate, n)
	for i := range cs {
		p := fmt.Sprintf("%s/e%d", base, i)
		acl := zk.WorldACL(zk.PermAll)
		if i == 25 {
			acl = append(zk.DigestACL(zk.PermAll, "someone", "else"), zk.WorldACL(zk.PermRead)...)
		}
		if _, err := raw.Create(p, nil, 0, acl); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
		cs[i] = candidate(t, s, p, recipe.WithBatchedCreates())
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, c := range cs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), wait)
			defer cancel()
			_, errs[i] = c.Campaign(ctx)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 25) != (err != nil) {
			t.Errorf("candidate %d: Campaign error %v", i, err)
		}
	}
}
