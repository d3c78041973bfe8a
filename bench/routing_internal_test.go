package bench

import (
	"strings"
	"testing"
	"time"
)

// routeLine is a stamped line of who at µs, its fields from text.
func routeLine(who string, at int64, text string) stampedLine {
	return stampedLine{who: who, at: at, fields: strings.Fields(text)}
}

// TestMisroutesTellsTheGoneMembersGapFromTheViewsLag: in a crash's
// window (m2 killed at 1,000,000 µs, reporting nothing after), requests
// that find no leader while m2's shard awaits its successor count as the
// gone member's gap, not as "no leader after the new leader led"; one
// that finds none 20 ms after the new leader's callback counts there,
// with how long after it the view showed that leader; one routed to m2
// before its session expired is in the gap, not a misroute; a request
// that waited is classed by what held when it began.
func TestMisroutesTellsTheGoneMembersGapFromTheViewsLag(t *testing.T) {
	ls := []stampedLine{
		routeLine("m2", 100, "LEAD 100 7 5"),
		routeLine("m1", 200, "LEAD 200 8 6"),
		routeLine("router", 1_100_000, "REQ 1100000 7 m2 5 ok 0"),      // m2 killed, its session not yet expired
		routeLine("router", 1_200_000, "REQ 1200000 7 - 0 noleader 0"), // expired, no successor yet
		routeLine("router", 1_300_000, "REQ 1300000 8 m1 6 ok 0"),      // untouched shard
		routeLine("m3", 2_000_000, "LEAD 2000000 7 9"),                 // the successor
		routeLine("router", 2_020_000, "REQ 2020000 7 - 0 noleader 0"), // 20 ms after: the view's lag
		routeLine("router", 2_030_000, "VIEW 2030000 7 m3 9"),          // the view shows it 10 ms after that request
		routeLine("router", 2_040_000, "REQ 2040000 7 m3 9 ok 500000"), // waited 500 ms, from m2's gap
		routeLine("router", 2_050_000, "REQ 2050000 8 m3 9 ok 0"),      // routed to a member not leading
		routeLine("router", 3_000_000, "REQ 3000000 7 m3 9 ok 0"),      // outside the window
		routeLine("router", 900_000, "REQ 900000 7 - 0 noleader 0"),    // before it
	}
	views := map[string]int64{"7/m3/9": 2_030_000, "8/m1/6": 300}
	got := misroutes(ls, [2]int64{1_000_000, 2_500_000}, "m2", views)
	want := reqTally{reqs: 6, wrong: 1, gap: 1, noLeader: 1, goneNoLeader: 1, waitedOK: 1}
	if got.reqs != want.reqs || got.wrong != want.wrong || got.gap != want.gap || got.noLeader != want.noLeader ||
		got.goneNoLeader != want.goneNoLeader || got.waitedOK != want.waitedOK {
		t.Errorf("misroutes = %+v, want counts %+v", got, want)
	}
	if len(got.viewAfter) != 1 || got.viewAfter[0] != 10*time.Millisecond || len(got.ledFor) != 1 || got.ledFor[0] != 20*time.Millisecond {
		t.Errorf("the request after the new leader: view after %v, led for %v; want 10ms and 20ms", got.viewAfter, got.ledFor)
	}
	if got.atFirst != [4]int{0, 0, 1, 0} || len(got.waits) != 1 || got.waits[0] != 500*time.Millisecond {
		t.Errorf("the request that waited: at first %v, waits %v; want it in m2's gap, 500ms", got.atFirst, got.waits)
	}
	// Without a gone member (a drain), m2's leadership stands: the same
	// request finds no leader while m2 led, counted as after a leader led.
	if got := misroutes(ls, [2]int64{1_000_000, 2_500_000}, "", views); got.goneNoLeader != 0 || got.noLeader != 2 {
		t.Errorf("misroutes with no gone member: %d gone, %d no leader after one led; want 0 and 2", got.goneNoLeader, got.noLeader)
	}
}
