package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

func TestRunCampaignsAgainAfterLoss(t *testing.T) {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	s := session(t, zkc.ConnectString())
	c := candidate(t, s, path)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	terms := make(chan zxidfence.Token)
	stale := make(chan string, 4)
	done := make(chan error, 1)
	go func() {
		done <- recipe.Run(ctx, c, func(ctx context.Context, token zxidfence.Token) error {
			terms <- token
			<-ctx.Done()
			// When the term ended because leadership did (not because Run's
			// context did), the candidate may lead again already (a new
			// term, with a new token), never still in this one.
			if l := c.Leadership(); l != nil && l.Token() == token && !errors.Is(context.Cause(ctx), context.Canceled) {
				stale <- fmt.Sprintf("candidate still reports the ended term %v: leading=%v err=%v cause=%v", token, l.Leading(), l.Err(), context.Cause(ctx))
			}
			return nil
		})
	}()
	var prev zxidfence.Token
	for i := 0; i < 3; i++ {
		var tok zxidfence.Token
		select {
		case tok = <-terms:
		case err := <-done:
			t.Fatalf("Run returned: %v", err)
		}
		if tok <= prev {
			t.Fatalf("term %d token %v after %v", i, tok, prev)
		}
		prev = tok
		// Someone deletes the leader's znode: the term ends, Run campaigns again.
		kids := children(t, raw, path)
		if len(kids) != 1 {
			t.Fatalf("children %v", kids)
		}
		if err := raw.Delete(path+"/"+kids[0], -1); err != nil {
			t.Fatal(err)
		}
	}
	<-terms
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	select {
	case msg := <-stale:
		t.Fatal(msg)
	default:
	}
	if kids := children(t, raw, path); len(kids) != 0 {
		t.Fatalf("znodes left after Run returned: %v", kids)
	}
}

func TestRunReturnsFunctionErrorAfterResigning(t *testing.T) {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	s := session(t, zkc.ConnectString())
	c := candidate(t, s, path)
	boom := errors.New("boom")
	err := recipe.Run(context.Background(), c, func(context.Context, zxidfence.Token) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Run returned %v, want boom", err)
	}
	if kids := children(t, raw, path); len(kids) != 0 {
		t.Fatalf("znodes left: %v", kids)
	}
}

func TestRunBacksOffWhenTheJobFinishesAtOnce(t *testing.T) {
	s := session(t, zkc.ConnectString())
	c := candidate(t, s, electionPath(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const terms = 3
	calls := make(chan time.Time, terms)
	done := make(chan error, 1)
	go func() {
		done <- recipe.Run(ctx, c, func(context.Context, zxidfence.Token) error {
			select {
			case calls <- time.Now():
			default:
				cancel() // enough terms seen
			}
			return nil
		})
	}()
	var first, last time.Time
	for i := 0; i < terms; i++ {
		select {
		case last = <-calls:
		case err := <-done:
			t.Fatalf("Run returned after %d terms: %v", i, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("term %d of a job that returns at once never started", i)
		}
		if i == 0 {
			first = last
		}
	}
	// Between terms 1-2 and 2-3 Run waits MinRunBackoff, then twice that.
	if gap := last.Sub(first); gap < 3*recipe.MinRunBackoff {
		t.Fatalf("3 terms within %v: Run did not back off (want >= %v)", gap, 3*recipe.MinRunBackoff)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
}

func TestRunRefusesNilArguments(t *testing.T) {
	s := session(t, zkc.ConnectString())
	c := candidate(t, s, electionPath(t))
	fn := func(context.Context, zxidfence.Token) error { return nil }
	for name, err := range map[string]error{
		"nil candidate": recipe.Run(context.Background(), nil, fn),
		"nil fn":        recipe.Run(context.Background(), c, nil),
	} {
		var oe *recipe.OptionError
		if !errors.As(err, &oe) || !errors.Is(err, recipe.ErrInvalidOption) {
			t.Errorf("%s: %v, want an *OptionError", name, err)
		}
	}
}

func TestResignReturnsWhileCampaigningAgain(t *testing.T) {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	s := session(t, zkc.ConnectString())
	c := candidate(t, s, path)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first, err := c.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	again := make(chan *recipe.Leadership, 1)
	go func() {
		<-first.Done() // closed by Resign before its delete is confirmed
		l, err := c.Campaign(ctx)
		if err != nil {
			t.Errorf("second Campaign: %v", err)
		}
		again <- l
	}()
	if err := first.Resign(ctx); err != nil {
		t.Fatalf("Resign with a Campaign racing it: %v", err)
	}
	second := <-again
	if second == nil {
		return
	}
	if second.Token() <= first.Token() {
		t.Fatalf("second term token %v, first %v", second.Token(), first.Token())
	}
	if kids := children(t, raw, path); len(kids) != 1 {
		t.Fatalf("children after resign and re-campaign: %v, want only the new znode", kids)
	}
}
