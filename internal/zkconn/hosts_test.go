package zkconn

import (
	"testing"

	"github.com/rs/zerolog"
)

// TestServerListPausesOncePerRound: go-zookeeper pauses a second when Next
// says retryStart; the list says so once per round of every entry, before
// the server it was last connected to, which after a drop comes after the
// others (as go-zookeeper's own provider paces it).
func TestServerListPausesOncePerRound(t *testing.T) {
	l := newServerList(zerolog.Nop())
	_ = l.Init([]string{"a:1", "b:1", "c:1"})
	pauses, seen := 0, map[string]int{}
	for range 3 { // the first round: no pause
		s, retry := l.Next()
		seen[s]++
		if retry {
			t.Fatalf("pause in the first round, before %s", s)
		}
	}
	for range 9 {
		s, retry := l.Next()
		seen[s]++
		if retry {
			pauses++
		}
	}
	if pauses != 3 || seen["a:1"] != 4 || seen["b:1"] != 4 || seen["c:1"] != 4 {
		t.Fatalf("over 4 rounds: %d pauses, dials %v; want 3 pauses and 4 dials each", pauses, seen)
	}
	s, _ := l.Next()
	l.Connected()      // connected to s; then the connection drops
	for i := range 6 { // the rest of the round, then the others, then s
		next, retry := l.Next()
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
