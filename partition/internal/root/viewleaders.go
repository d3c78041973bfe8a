package root

import "github.com/zkelect/zkelect/zxidfence"

// This file follows the leaders the records publish (what Leaders
// returns) from what changed, for Config.OnLeaderChanged: a record's
// delta or a member joining or leaving costs the shards it changed, never
// the whole shard list.

// TrackLeaders makes v note, from now on, the shards whose published
// leader may change (LeaderChanges); it calls Track first. The first
// LeaderChanges after it reports every shard some record claims: O(shards
// in the records), once. Later calls do nothing.
func (v *View) TrackLeaders() {
	v.Track()
	x := v.idx
	if x.leaders != nil {
		return
	}
	x.leaders = make(map[string]struct{}, max(len(x.claims), x.hint))
	for s := range x.claims {
		x.leaders[s] = struct{}{}
	}
}

// Leader returns shard s's leader as Leaders would, from the claims v
// tracks: the leading claim with the largest token (then the smaller
// member id) among the records live members wrote in their current
// session, token 0 left out; the zero Published when none. SetOwn's
// record stands for its member's (the claims it publishes next). It needs
// Track (the zero Published without).
func (v *View) Leader(s string) Published {
	if v.idx == nil {
		return Published{}
	}
	x := v.idx
	var out Published
	x.each(s, func(e claimEntry) {
		if e.reserved || e.token == 0 {
			return
		}
		id := x.ids.name(e.member)
		if kindOf(v.Members, v.Grace, id, x.eff[id]) != leading {
			return
		}
		if p := (Published{id, zxidfence.Token(e.token)}); p.Supersedes(out) {
			out = p
		}
	})
	return out
}

// LeaderChanges calls f with every shard whose leader may have changed
// since the last call (since TrackLeaders: every claimed shard), with its
// leader as Leader returns it (the zero Published: none), and forgets
// them. It costs the shards changed. Without TrackLeaders it does nothing.
func (v *View) LeaderChanges(f func(shard string, p Published)) {
	if v.idx == nil || v.idx.leaders == nil {
		return
	}
	for s := range v.idx.leaders {
		f(s, v.Leader(s))
	}
	v.idx.leaders = map[string]struct{}{} // clear would keep the capacity, and a walk of it costs O(capacity)
}
