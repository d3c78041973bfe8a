package bench

import (
	"strconv"
	"testing"
	"time"
)

// TestStampedLinesTimeTheCandidatesOwnReport: a LEADER line carrying the
// candidate's stamp is timed by it, not by when this process read it (the
// pipe and scheduling in between are not the failover's); an unstamped
// line, or a stamp outside the instruction and the reading, falls back to
// the reading's bounds.
func TestStampedLinesTimeTheCandidatesOwnReport(t *testing.T) {
	start := time.Now()
	read := start.Add(40 * time.Millisecond)
	stamp := func(d time.Duration) string { return "LEADER " + strconv.FormatInt(start.Add(d).UnixMicro(), 10) }
	for _, c := range []struct {
		text     string
		wantText string
		want     time.Duration
	}{
		{stamp(3 * time.Millisecond), "LEADER", 3 * time.Millisecond},
		{"LEADER", "LEADER", 40 * time.Millisecond},
		{"READY", "READY", 40 * time.Millisecond},
		{stamp(-time.Second), "LEADER", 0},
		{stamp(time.Second), "LEADER", 40 * time.Millisecond},
		{"LEADER soon", "LEADER soon", 40 * time.Millisecond},
	} {
		l := readLine(c.text, read)
		got := l.since(start)
		if l.text != c.wantText || got < c.want-time.Millisecond || got > c.want+time.Millisecond {
			t.Errorf("%q: text %q, %v after the instruction; want %q, %v", c.text, l.text, got, c.wantText, c.want)
		}
	}
}
