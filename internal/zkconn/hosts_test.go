package zkconn

import (
	"slices"
	"testing"

	"github.com/rs/zerolog"
)

// TestServerListPausesOncePerRound: go-zookeeper pauses a second when Next
// says retryStart; the list says so once per round of every entry, before
// the server it was last connected to, which after a drop comes after the
// others (as go-zookeeper's own provider paces it).
func TestServerListPausesOncePerRound(t *testing.T) {
	l := newServerList(zerolog.Nop(), nil)
	_ = l.Init([]string{"a:1", "b:1", "c:1"})
	pauses, seen := 0, map[string]int{}
	for range 3 { // the first round: no pause
		s, retry := nextDial(l)
		seen[s]++
		if retry {
			t.Fatalf("pause in the first round, before %s", s)
		}
	}
	for range 9 {
		s, retry := nextDial(l)
		seen[s]++
		if retry {
			pauses++
		}
	}
	if pauses != 3 || seen["a:1"] != 4 || seen["b:1"] != 4 || seen["c:1"] != 4 {
		t.Fatalf("over 4 rounds: %d pauses, dials %v; want 3 pauses and 4 dials each", pauses, seen)
	}
	s, _ := nextDial(l)
	l.Connected()      // connected to s; then the connection drops
	for i := range 6 { // the rest of the round, then the others, then s
		next, retry := nextDial(l)
		if next == s {
			if !retry || i < 2 {
				t.Fatalf("after a drop from %s: back to it at dial %d, pause %v; want it after the others and a pause", s, i, retry)
			}
			return
		}
		if retry {
			t.Fatalf("after a drop from %s: a pause before %s", s, next)
		}
	}
	t.Fatalf("after a drop from %s: not dialled again in 6 attempts", s)
}

// TestServerListDoesNotPauseAfterAnAnswer: a server that answered (a new
// session, an expiry believed) since the anchor was last dialled spares
// the pause before it; a round without an answer pauses again.
func TestServerListDoesNotPauseAfterAnAnswer(t *testing.T) {
	l := newServerList(zerolog.Nop(), nil)
	_ = l.Init([]string{"a:1"})
	if _, retry := nextDial(l); retry {
		t.Fatal("pause before the first dial")
	}
	l.answered(answerSession) // a new session
	l.Connected()
	if _, retry := nextDial(l); retry {
		t.Fatal("pause before dialling again the server that granted a new session (its connection dropped)")
	}
	l.answered(answerSession) // it said the session expired
	if _, retry := nextDial(l); retry {
		t.Fatal("pause before dialling again the server that answered that the session expired")
	}
	if _, retry := nextDial(l); !retry {
		t.Fatal("no pause after a round in which no server answered")
	}
	if n := l.pausesAsked(); n != 1 {
		t.Fatalf("%d pauses asked, want 1", n)
	}
}

// TestServerListPacesAServerThatResumesAndDrops: a server that resumed
// the session spares the pause before it maxResumedRedials times in a row,
// not more, so a server that resumes the session and drops the connection
// at once is dialled at most maxResumedRedials+1 times a pause.
func TestServerListPacesAServerThatResumesAndDrops(t *testing.T) {
	l := newServerList(zerolog.Nop(), nil)
	_ = l.Init([]string{"a:1"})
	_, _ = nextDial(l)
	l.answered(answerSession)
	l.Connected()
	_, _ = nextDial(l) // the connection dropped: dialled at once
	var pauses []bool
	for range 8 { // each dial resumes the session, then the connection drops
		l.answered(answerResumed)
		_, retry := nextDial(l)
		pauses = append(pauses, retry)
	}
	if want := []bool{false, false, false, true, false, false, false, true}; !slices.Equal(pauses, want) {
		t.Fatalf("pauses before each redial after a resume and a drop: %v, want %v", pauses, want)
	}
}

// nextDial is what the layer does for each dial: the entry from Next,
// then the pause when one is due (dialroute.go).
func nextDial(l *serverList) (string, bool) {
	s, retry := l.Next()
	if retry {
		panic("Next asked go-zookeeper for its fixed pause")
	}
	return s, l.takePause()
}
