package root

import "github.com/zkelect/zkelect/zxidfence"

// This file keeps one observer's stream of leaders from going back in
// time. A shard's tokens only grow (each is the czxid of a leader znode of
// its election, and a session never sees ZooKeeper's zxids go back), but
// the records an observer reads lag the elections, each by its own
// member's publish gap and its own watch: after a handoff from a to b, b's
// record may be read claiming the shard and then dropping it while a's
// record, read earlier, still claims it with a's older token. View.Leaders
// then names a again, with a token lower than one already reported.

// LeaderFloor remembers, per shard, the largest token an observer stream
// reported (shard id to token), to hide the claims below it. The zero
// value is not usable; NewLeaderFloor returns one. One goroutine owns it.
type LeaderFloor map[string]zxidfence.Token

// NewLeaderFloor returns a floor for a new stream: every claim passes.
func NewLeaderFloor() LeaderFloor { return LeaderFloor{} }

// Admit filters leaders (View.Leaders' result, which it owns and edits in
// place) and returns it: a shard whose claim has a token below the largest
// one admitted for it before is a stale record's (a later leader has held
// the shard since) and is left out, that is reported without a leader,
// until a claim at or above the floor is read. A shard no current record
// claims at all forgets its floor, so that an election deleted and created
// again (its tokens start over only when the ensemble's zxids do, as after
// a restore into a new ensemble) is followed again once its leader
// publishes.
func (f LeaderFloor) Admit(leaders map[string]Published) map[string]Published {
	before, known := len(f), 0
	var stale []string
	for s, p := range leaders {
		floor, ok := f[s]
		if ok {
			known++
		}
		switch {
		case p.Token < floor:
			stale = append(stale, s)
		case !ok || p.Token != floor:
			f[s] = p.Token
		}
	}
	if known < before { // some shards with a floor are claimed no more
		for s := range f {
			if _, claimed := leaders[s]; !claimed {
				delete(f, s)
			}
		}
	}
	for _, s := range stale {
		delete(leaders, s)
	}
	return leaders
}

// AdmitOne is Admit for one shard's claim p (the zero Published: no
// record claims s): it returns p, or the zero Published for a claim below
// the floor (a stale record's). A shard no record claims forgets its
// floor. A stream fed by AdmitOne from View.LeaderChanges admits, shard by
// shard, what Admit admits from View.Leaders.
func (f LeaderFloor) AdmitOne(s string, p Published) Published {
	floor, ok := f[s]
	switch {
	case p.Member == "":
		delete(f, s)
	case p.Token < floor:
		return Published{}
	case !ok || p.Token != floor:
		f[s] = p.Token
	}
	return p
}
