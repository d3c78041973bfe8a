package recipe_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestReadsEndWithTheirContext: with the session's server answering pings
// but no request, Leader, Participants and Observe give up when their ctx
// ends and leave no goroutine behind (go-zookeeper's calls take no
// context: a read run beside its caller would still be waiting for the
// answer). The server grants a long session timeout, so neither the
// request deadline nor a late ping reply on a loaded machine drops the
// connection meanwhile.
func TestReadsEndWithTheirContext(t *testing.T) {
	ens := testenv.New(t, testenv.Options{Servers: 1, MaxSessionTimeout: 20 * time.Second})
	p := ens.NewProxyT(t)
	s := session(t, p.ConnectString(), recipe.WithSessionTimeout(20*time.Second))
	path := electionPath(t)
	if err := p.ForwardOnlyPings(0); err != nil {
		t.Fatal(err)
	}
	defer p.Heal()
	reads := []struct {
		name string
		read func(context.Context) error
	}{
		{"Leader", func(ctx context.Context) error { _, err := recipe.Leader(ctx, s, path); return err }},
		{"Participants", func(ctx context.Context) error { _, err := recipe.Participants(ctx, s, path); return err }},
		{"Observe", func(ctx context.Context) error {
			for obs := range recipe.Observe(ctx, s, path) {
				return errors.Join(errors.New("observed with no request answered"), obs.Err)
			}
			return ctx.Err()
		}},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			if err := r.read(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s with no request answered: %v, want the ctx's deadline", r.name, err)
			}
			// A reconnect's loops are the session's, not the read's.
			goleak.VerifyNone(t, before,
				goleak.IgnoreAnyFunction("github.com/go-zookeeper/zk.(*Conn).sendLoop"),
				goleak.IgnoreAnyFunction("github.com/go-zookeeper/zk.(*Conn).recvLoop"))
		})
	}
}
