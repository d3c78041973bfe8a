package recipe_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
)

// TestNewCandidateInitialisesBeforeItsFirstEvent: NewCandidate subscribes the
// candidate's sink and only then initialises the loop's state
// (c.st.init); since the mailbox starts the loop on the first post, a
// session event fanned out right after Subscribe runs the loop on another
// goroutine while init still writes the state. Run with -race: candidates
// are created while the session's connection is cut again and again.
func TestNewCandidateInitialisesBeforeItsFirstEvent(t *testing.T) {
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	base := electionPath(t)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			if stop.Load() {
				return
			}
			p.Cut()
		}
	}()
	deadline := time.Now().Add(2 * time.Second)
	var cs []*recipe.Candidate
	for i := 0; time.Now().Before(deadline) && i < 20000; i++ {
		c, err := recipe.NewCandidate(s, fmt.Sprintf("%s/e%d", base, i%50))
		if err != nil {
			t.Fatalf("new candidate: %v", err)
		}
		cs = append(cs, c)
	}
	t.Logf("%d candidates", len(cs))
	for _, c := range cs {
		_ = c.Close()
	}
	stop.Store(true)
	<-done
}
