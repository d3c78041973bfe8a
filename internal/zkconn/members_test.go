package zkconn

import (
	"slices"
	"testing"

	"github.com/rs/zerolog"
)

// round returns the entries of the next whole round of l.
func round(l *serverList) []string {
	_ = l.Len()
	l.mu.Lock()
	l.pos = len(l.round) // start a new round
	l.mu.Unlock()
	var out []string
	n := l.Len()
	for range n {
		s, _ := nextDial(l)
		out = append(out, s)
	}
	return out
}

// TestMembersAreAddedNeverInPlaceOfTheSeed: the members of the
// configuration join the seed in every round; one that timed out twice
// without answering is dropped, one that answered once never is; a round
// in which no server answered gives the dropped another trial; a server of
// the seed that the configuration removed is left out.
func TestMembersAreAddedNeverInPlaceOfTheSeed(t *testing.T) {
	l := newServerList(zerolog.Nop(), nil)
	_ = l.Init([]string{"lb:2181"})
	l.setMembers([]member{{"server.1", "10.0.0.1:2181"}, {"server.2", "10.0.0.2:2181"}, {"server.3", ""}})
	if got := round(l); !sameSet(got, []string{"lb:2181", "10.0.0.1:2181", "10.0.0.2:2181"}) {
		t.Fatalf("round with the members: %v; want the seed and both dialable members", got)
	}
	if !l.onTrial("10.0.0.1:2181") || l.onTrial("lb:2181") {
		t.Fatal("the members are on trial, the seed is not")
	}
	l.tried("10.0.0.2:2181", true) // answered once: never dropped
	for range maxTrialTimeouts {
		l.tried("10.0.0.1:2181", false)
		l.tried("10.0.0.2:2181", false)
	}
	l.answered(answerResumed) // the seed answers
	if got := round(l); !sameSet(got, []string{"lb:2181", "10.0.0.2:2181"}) {
		t.Fatalf("round after 10.0.0.1 timed out %d times: %v; want it dropped, the seed and 10.0.0.2 kept", maxTrialTimeouts, got)
	}
	round(l) // no server answered in it
	if got := round(l); !slices.Contains(got, "10.0.0.1:2181") {
		t.Fatalf("round after one without an answer: %v; want 10.0.0.1 tried again", got)
	}

	seeded := newServerList(zerolog.Nop(), nil)
	_ = seeded.Init([]string{"a:1", "b:1"})
	seeded.setMembers([]member{{"server.1", "a:1"}, {"server.2", "b:1"}})
	seeded.setMembers([]member{{"server.1", "a:1"}})
	if got := round(seeded); !slices.Equal(got, []string{"a:1"}) {
		t.Fatalf("round after b left the ensemble: %v; want a alone", got)
	}
	seeded.setMembers([]member{{"server.3", "c:1"}})
	if got := round(seeded); !slices.Equal(got, []string{"c:1"}) {
		t.Fatalf("round after a and b left for c: %v; want c alone", got)
	}
}
