package zkconn

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/jute"
)

func TestStallCountsFromTheOldestRequestOrTheLatestAnswer(t *testing.T) {
	w := newWireTracker(1, time.Second, zerolog.Nop())
	c := &wireConn{w: w, pending: map[int32]sentRequest{}}
	w.current = c
	c.pending[1] = sentRequest{at: time.Now(), op: jute.OpGetData}
	if _, ok := w.stalled(); ok {
		t.Fatal("a connection before its handshake counted as stalled")
	}
	c.established.Store(true)
	clear(c.pending)
	if _, ok := w.stalled(); ok {
		t.Fatal("stalled with no request in flight")
	}
	t0 := time.Now()
	c.pending[7] = sentRequest{at: t0.Add(time.Second), op: jute.OpCreate2}
	c.pending[5] = sentRequest{at: t0, op: jute.OpGetData}
	st, ok := w.stalled()
	if !ok || st.conn != c || st.oldest.op != jute.OpGetData || !st.since.Equal(t0) {
		t.Fatalf("stalled() = %+v, %v; want the getData sent at t0", st, ok)
	}
	// A server working through a backlog answers as it goes: the wait
	// counts from its latest answer.
	c.answered = t0.Add(3 * time.Second)
	if st, _ := w.stalled(); !st.since.Equal(c.answered) {
		t.Fatalf("since = %v, want the latest answer %v", st.since, c.answered)
	}
}
