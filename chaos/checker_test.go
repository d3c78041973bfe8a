package chaos

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/zkelect/zkelect/zxidfence"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func acquire(ms int, member, shard string, tok zxidfence.Token) Record {
	return Record{Time: at(ms), Kind: KindAcquire, Member: member, Shard: shard, Token: tok}
}

func release(ms int, member, shard string, tok zxidfence.Token) Record {
	return Record{Time: at(ms), Kind: KindRelease, Member: member, Shard: shard, Token: tok}
}

func write(startMS, endMS int, member, res string, tok zxidfence.Token, res2 Result) Record {
	return Record{Time: at(endMS), Start: at(startMS), Kind: KindWrite, Member: member, Shard: "s",
		Resource: res, Token: tok, Result: res2}
}

func mark(ms int, k Kind) Record { return Record{Time: at(ms), Kind: k} }

// cleanHistory: m1 leads with token 10, is paused, m2 takes over with 20,
// m1 resumes, its write is refused as stale, and it releases.
func cleanHistory() []Record {
	return []Record{
		acquire(0, "m1", "s", 10),
		write(10, 20, "m1", "sql:s", 10, Accepted),
		write(30, 40, "m1", "sql:s", 10, Accepted),
		{Time: at(50), Kind: KindFault, Fault: "pause-long", Member: "m1"},
		acquire(3000, "m2", "s", 20),
		write(3010, 3020, "m2", "sql:s", 20, Accepted),
		write(3030, 3040, "m1", "sql:s", 10, RejectedStale),
		write(3030, 3045, "m1", "zk:s", 10, RejectedNotLeader),
		release(3050, "m1", "s", 10),
		mark(3100, KindHeal),
		write(3200, 3210, "m2", "sql:s", 20, Accepted),
		mark(4000, KindEnd),
		release(4100, "m2", "s", 20),
	}
}

var cfg = CheckConfig{Shards: []string{"s"}, SessionTimeout: time.Second, Bound: time.Second}

func TestCheckRules(t *testing.T) {
	tests := []struct {
		name string
		recs []Record
		want map[int]int // rule -> violations
	}{
		{name: "clean history with a fenced paused leader", recs: cleanHistory()},
		{
			name: "lower token accepted after a higher one ended",
			recs: append(cleanHistory(), write(3500, 3510, "m1", "sql:s", 10, Accepted)),
			want: map[int]int{RuleStaleAccepted: 1},
		},
		{
			name: "lower token accepted concurrently with a higher one is not provably out of order",
			recs: append(cleanHistory(), write(3205, 3215, "m1", "zk:s", 10, Accepted),
				write(3200, 3220, "m2", "zk:s", 20, Accepted)),
		},
		{
			name: "a higher generation outranks a higher token",
			recs: []Record{
				{Time: at(10), Start: at(0), Kind: KindWrite, Resource: "r", Token: 50, Result: Accepted},
				{Time: at(30), Start: at(20), Kind: KindWrite, Resource: "r", Token: 5, Generation: 1, Result: Accepted},
			},
		},
		{
			name: "overlapping terms whose later token is lower",
			recs: []Record{acquire(0, "m1", "s", 20), acquire(100, "m2", "s", 10),
				release(200, "m1", "s", 20), release(300, "m2", "s", 10)},
			want: map[int]int{RuleOverlap: 1},
		},
		{
			name: "overlapping terms with an equal token on two members",
			recs: []Record{acquire(0, "m1", "s", 20), acquire(0, "m2", "s", 20),
				release(200, "m1", "s", 20), release(300, "m2", "s", 20)},
			want: map[int]int{RuleOverlap: 1},
		},
		{
			name: "a crash ends the crashed member's term",
			recs: []Record{acquire(0, "m1", "s", 20), {Time: at(50), Kind: KindCrash, Member: "m1"},
				acquire(100, "m2", "s", 10), release(300, "m2", "s", 10)},
		},
		{
			name: "an unreleased term lasts to the end of observation",
			recs: []Record{acquire(0, "m1", "s", 20), acquire(100, "m2", "s", 10), mark(200, KindEnd)},
			want: map[int]int{RuleOverlap: 1},
		},
		{
			name: "shard without a leader at the end of a full observation",
			recs: []Record{acquire(0, "m1", "s", 20), release(100, "m1", "s", 20), mark(200, KindHeal), mark(2300, KindEnd)},
			want: map[int]int{RuleUnavailable: 1},
		},
		{
			name: "shard briefly without a leader when observation ends early",
			recs: []Record{acquire(0, "m1", "s", 20), mark(200, KindHeal), release(900, "m1", "s", 20), mark(1000, KindEnd)},
		},
		{
			name: "shard led again too late after the heal",
			recs: []Record{mark(0, KindHeal), acquire(2500, "m1", "s", 20), mark(3000, KindEnd)},
			want: map[int]int{RuleUnavailable: 1},
		},
		{
			name: "shard led again within the limit after the heal",
			recs: []Record{mark(0, KindHeal), acquire(1900, "m1", "s", 20), mark(3000, KindEnd)},
		},
		{
			name: "an expected shard never led",
			recs: []Record{mark(0, KindHeal), mark(2000, KindEnd)},
			want: map[int]int{RuleUnavailable: 1},
		},
		{
			name: "something left behind",
			recs: append(cleanHistory(), Record{Time: at(5000), Kind: KindLeftover, Detail: "ephemeral znode /x"}),
			want: map[int]int{RuleLeftover: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := Check(tc.recs, cfg)
			got := rep.Counts
			if len(tc.want) == 0 && !rep.OK() {
				t.Fatalf("want no violation, got %v:\n%s", got, violations(rep))
			}
			for rule, n := range tc.want {
				if got[rule] != n {
					t.Fatalf("rule %d: want %d violations, got %d:\n%s", rule, n, got[rule], violations(rep))
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("want violations %v, got %v:\n%s", tc.want, got, violations(rep))
			}
		})
	}
}

func violations(rep *Report) string {
	var s []string
	for _, v := range rep.Violations {
		s = append(s, v.String())
	}
	return strings.Join(s, "\n")
}

func TestCheckSummary(t *testing.T) {
	recs := cleanHistory()
	recs = append(recs, Record{Time: at(3500), Kind: KindFault, Fault: "zk-kill"})
	rep := Check(recs, cfg)
	s := rep.Summary
	if s.Faults["pause-long"] != 1 || s.Faults["zk-kill"] != 1 {
		t.Errorf("faults = %v", s.Faults)
	}
	if s.Terms != 2 || s.Failovers != 1 || s.Overlaps != 1 {
		t.Errorf("terms %d failovers %d overlaps %d, want 2 1 1", s.Terms, s.Failovers, s.Overlaps)
	}
	if s.OverlapsAfter["pause-long"] != 1 {
		t.Errorf("overlaps after = %v, want pause-long=1", s.OverlapsAfter)
	}
	if s.Writes != 6 || s.Accepted != 4 || s.Stale != 1 || s.NotLeader != 1 {
		t.Errorf("writes %+v", s)
	}
	// m1 acted 0..3050 and m2 3000..end: the shard was never leaderless.
	if d := s.MaxUnavailable["s"]; d != 0 {
		t.Errorf("max unavailability = %s, want 0", d)
	}
	if !strings.Contains(s.String(), "1 rejected as stale") {
		t.Errorf("summary text lacks the stale count:\n%s", s)
	}
}

func TestCheckMaxUnavailability(t *testing.T) {
	recs := []Record{acquire(0, "m1", "s", 1), release(100, "m1", "s", 1),
		acquire(1100, "m2", "s", 2), mark(2000, KindEnd)}
	if d := Check(recs, cfg).Summary.MaxUnavailable["s"]; d != time.Second {
		t.Fatalf("max unavailability = %s, want 1s", d)
	}
}

func TestCheckCapsReportedViolations(t *testing.T) {
	recs := []Record{write(0, 10, "m2", "r", 20, Accepted)}
	for i := range 30 {
		recs = append(recs, write(20+i*10, 25+i*10, "m1", "r", 10, Accepted))
	}
	rep := Check(recs, cfg)
	if rep.Counts[RuleStaleAccepted] != 30 || len(rep.Violations) != maxViolationsPerRule {
		t.Fatalf("count %d, kept %d", rep.Counts[RuleStaleAccepted], len(rep.Violations))
	}
}

func TestHistoryRoundTrip(t *testing.T) {
	path := t.TempDir() + "/h.jsonl"
	w, err := OpenRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cleanHistory() {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.Record(Record{Kind: KindEnd}); err == nil {
		t.Fatal("Record after Close succeeded")
	}
	got, err := ReadFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	want := cleanHistory()
	SortRecords(want)
	if len(got) != len(want) {
		t.Fatalf("read %d records, wrote %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) || got[i].Token != want[i].Token || got[i].Kind != want[i].Kind {
			t.Fatalf("record %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestReadHistoryTornAndMalformedLines(t *testing.T) {
	good := `{"t":"2026-01-02T03:04:05Z","kind":"acquire","member":"m1","shard":"s","token":"10"}` + "\n"
	recs, err := ReadHistory(strings.NewReader(good + `{"t":"2026-01-02T0`))
	if err != nil || len(recs) != 1 || recs[0].Token != 10 {
		t.Fatalf("torn last line: %v, %+v", err, recs)
	}
	if _, err := ReadHistory(bytes.NewBufferString(good + "not json\n")); err == nil ||
		!strings.Contains(err.Error(), "line 2") {
		t.Fatalf("malformed line: err = %v, want one naming line 2", err)
	}
}
