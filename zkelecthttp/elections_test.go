package zkelecthttp_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zkelecthttp"
)

// TestElectionsServesASessionAndItsCandidates: for recipe alone, /healthz
// and /readyz pass while the session is connected, /v1/leaderships lists
// the candidate that leads (its election, participant id and token) and
// not the one that stands by; cut off past the lease, both probes fail
// with the reason.
func TestElectionsServesASessionAndItsCandidates(t *testing.T) {
	proxy := zkc.NewProxyT(t)
	sess, other := connect(t, proxy.Addrs()), connect(t, zkc.Addrs())
	path := testPath(t)
	leader := campaign(t, sess, path, "a")
	standby, err := recipe.NewCandidate(other, path, recipe.WithParticipantID("b"))
	if err != nil {
		t.Fatal(err)
	}
	standing := make(chan error, 1)
	go func() { _, err := standby.Campaign(t.Context()); standing <- err }()
	t.Cleanup(func() { standby.Close(); <-standing })
	api := zkelecthttp.NewElections(sess, []*recipe.Candidate{leader, standby})
	mux := http.NewServeMux()
	api.Register(mux)
	url := serve(t, mux)
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, url+p); code != http.StatusOK {
			t.Errorf("%s of a connected session: %d %s", p, code, body)
		}
	}
	var ls []zkelecthttp.Leadership
	getJSON(t, url+"/v1/leaderships", &ls)
	tok := leader.Leadership().Token()
	if len(ls) != 1 || ls[0].Election != path || ls[0].Member != "a" || ls[0].Token != tok.Decimal() {
		t.Errorf("/v1/leaderships = %+v, want the leader a of %s with token %s", ls, path, tok.Decimal())
	}
	proxy.Blackhole()
	eventually(t, 30*time.Second, "/healthz and /readyz to fail while cut off past the lease", func() bool {
		hc, _ := get(t, url+"/healthz")
		rc, _ := get(t, url+"/readyz")
		return hc == http.StatusServiceUnavailable && rc == http.StatusServiceUnavailable
	})
	proxy.Heal()
}

// campaign makes a candidate with participant id on sess and waits until
// it leads path.
func campaign(t *testing.T, sess *recipe.Session, path, id string) *recipe.Candidate {
	t.Helper()
	c, err := recipe.NewCandidate(sess, path, recipe.WithParticipantID(id))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Campaign(t.Context()); err != nil {
		t.Fatalf("campaign of %s: %v", id, err)
	}
	return c
}
