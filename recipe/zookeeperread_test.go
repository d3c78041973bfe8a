package recipe_test

import (
	"context"
	"testing"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestReadsAnswerThroughADroppedConnection: a read whose reply is lost
// with its connection (the server answered; the proxy drops the reply and
// cuts) is asked again on the next connection and answers, instead of
// failing a one-shot read (Owners, LiveMembers, a status command) for a
// connection that was merely replaced.
func TestReadsAnswerThroughADroppedConnection(t *testing.T) {
	reads := []struct {
		name string
		op   int32
		read func(ctx context.Context, s *recipe.Session, path string) error
	}{
		{"get", testenv.OpGetData, func(ctx context.Context, s *recipe.Session, p string) error {
			_, _, err := s.Get(ctx, p)
			return err
		}},
		{"children", testenv.OpGetChildren2, func(ctx context.Context, s *recipe.Session, p string) error {
			_, _, err := s.Children(ctx, p)
			return err
		}},
		{"exists", testenv.OpExists, func(ctx context.Context, s *recipe.Session, p string) error {
			ok, _, err := s.Exists(ctx, p)
			if err == nil && !ok {
				t.Errorf("exists: the znode is reported missing")
			}
			return err
		}},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			path := electionPath(t)
			ensurePath(t, rawConn(t, zkc.ConnectString()), path)
			p := zkc.NewProxyT(t)
			s := session(t, p.ConnectString())
			fired := p.CutAfterRequest(r.op)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			if err := r.read(ctx, s, path); err != nil {
				t.Fatalf("%s after its reply was lost with the connection: %v", r.name, err)
			}
			awaitCut(t, fired)
		})
	}
}
