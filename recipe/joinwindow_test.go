package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// TestElectionPathMadeOpenDuringTheCheckIsNeverJoined races an anonymous
// client against a secured candidate on a missing election path under a
// shared level (world:anyone:cr, as SharedParentACL makes it): the client
// creates the path open at moments spread over the candidate's check and
// create, which a slow link (request latency) widens to several
// milliseconds. A candidate that checked the path missing and then
// created its znode in the client's open path was joined: the client
// could delete the leader's znode at will. Each campaign must either
// refuse the open path or lead in a path of the group's own.
func TestElectionPathMadeOpenDuringTheCheckIsNeverJoined(t *testing.T) {
	const (
		trials  = 100
		latency = 10 * time.Millisecond
	)
	raw := rawConn(t, zkc.ConnectString())
	shared := electionPath(t)
	ensurePath(t, raw, path.Dir(shared))
	if _, err := raw.Create(shared, nil, 0, zk.WorldACL(zk.PermCreate|zk.PermRead)); err != nil {
		t.Fatal(err)
	}
	proxy := zkc.NewProxyT(t)
	s := session(t, proxy.ConnectString(), recipe.WithDigestAuth("alice", "secret"))
	proxy.SetRequestLatency(latency)
	var joined, refused, led, inWindow int
	for i := range trials {
		p := fmt.Sprintf("%s/e%03d", shared, i)
		c, err := recipe.NewCandidate(s, p, recipe.WithACL(recipe.GroupACL()))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		res := campaignAsync(ctx, c)
		// Not a synchronisation: this places the client's create at a
		// point from 0 to 6 request latencies into the campaign, over the
		// check (two reads) and the create; the assertions hold wherever it
		// lands.
		time.Sleep(time.Duration(i%30) * latency / 5)
		_, cerr := raw.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		opened := cerr == nil
		if !opened && !errors.Is(cerr, zk.ErrNodeExists) {
			t.Fatalf("trial %d: the anonymous create of %s: %v", i, p, cerr)
		}
		r := awaitResult(t, res, fmt.Sprintf("trial %d's campaign", i))
		cancel()
		switch {
		case r.err == nil && opened:
			joined++
			t.Errorf("trial %d: the candidate leads in %s, which the anonymous client made open", i, p)
		case r.err == nil:
			led++
			acl, _, err := raw.GetACL(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := recipe.FormatACL(acl); got != "digest:alice:x:cdrwa,world:anyone:r" {
				t.Errorf("trial %d: the candidate leads in %s with ACL %s; want the group's", i, p, got)
			}
		case opened && errors.Is(r.err, recipe.ErrUnsafeACL):
			refused++
		default:
			t.Fatalf("trial %d: campaign on %s (anonymous create: %v): %v", i, p, cerr, r.err)
		}
		if opened {
			// A candidate znode created and deleted in the client's path
			// shows in its child version: the create landed in the window.
			if _, st, err := raw.Exists(p); err == nil && st != nil && st.Cversion > 0 {
				inWindow++
			}
		}
		if err := c.Close(); err != nil {
			t.Fatalf("trial %d: close: %v", i, err)
		}
	}
	t.Logf("%d trials: %d led in the group's path, %d refused the open path (%d of them after a create in it), %d joined",
		trials, led, refused, inWindow, joined)
	if joined > 0 {
		t.Fatalf("%d of %d campaigns joined an election path made open between the check and the create", joined, trials)
	}
}
