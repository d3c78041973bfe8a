package partition

import (
	"maps"
	"slices"

	"github.com/zkelect/zkelect/zxidfence"
)

// This file holds the state every member observes and computes the
// assignment from: the live members (ephemeral znodes under
// <root>/members) and every member's record (persistent znodes under
// <root>/owners) of the shards it leads and the shards reserved for it.
//
// Who holds a shard, for the assignment, in order of precedence:
//
//  1. A reservation: every shard in the record of a member that is not live
//     (it left less than its restart grace ago: once the grace passes, a
//     live member deletes the record), or whose record was written by an
//     earlier session (it just came back), or listed as reserved in its
//     current record (it came back and has not got it yet).
//  2. A leader: the shards a live member's current record says it leads.
//
// Between claims of one level the larger token wins (a record can lag
// behind a handoff by a write), then the smaller member id. Every member
// reads the same znodes, so once they stop changing every member computes
// the same holders and the same assignment.

// storedRecord is a record with the version of the znode it was read from.
type storedRecord struct {
	record
	version int32
}

// view is the observed state.
type view struct {
	members  map[string]int64        // live member id to its session id
	records  map[string]storedRecord // member id to its record
	operator storedOperator          // the operator state
	opRead   bool                    // the operator state has been read once
	grace    bool                    // records of absent members reserve their shards
}

func newView(grace bool) *view {
	return &view{
		members: map[string]int64{}, records: map[string]storedRecord{},
		operator: storedOperator{version: -1}, grace: grace,
	}
}

// apply merges a watcher's update.
func (v *view) apply(u update) {
	switch {
	case u.members != nil:
		v.members = u.members
	case u.operator != nil:
		v.operator, v.opRead = *u.operator, true
	case u.rec == nil:
		delete(v.records, u.member)
	default:
		v.records[u.member] = *u.rec
	}
}

// leaders returns the leader of every shard as the records publish it: the
// claim with the largest token (the later leader, when a record lags a
// handoff) among the records that live members wrote in their current
// session. Claims with token 0 (a final record's reservations) are not
// leaderships.
func (v *view) leaders() map[string]published {
	claims := 0
	for _, r := range v.records {
		claims += len(r.Leading)
	}
	out := make(map[string]published, claims) // sized once: growing it cost 3/4 of the time at 10,000 shards
	for id, r := range v.records {
		if sess, live := v.members[id]; !live || sess != r.Session {
			continue
		}
		for s, tok := range r.Leading {
			if p := (published{id, zxidfence.Token(tok)}); tok != 0 && p.supersedes(out[s]) {
				out[s] = p
			}
		}
	}
	return out
}

// liveMembers returns the live member ids.
func (v *view) liveMembers() []string {
	ids := make([]string, 0, len(v.members))
	for id := range v.members {
		ids = append(ids, id)
	}
	return ids
}

// current returns the holder of every held shard (see the file comment),
// and the holders' tokens. Without a restart grace, the records of absent
// members are ignored. The reservations (few, but they take precedence)
// are collected first; the leaders' claims (most of the shards) then go
// straight into the result. own, when not nil, stands for its member's
// record in place of the one read: a member knows its own claims before
// its record's write is read back, or while its record is missing (the
// others deleted it when its session expired late in its grace).
func (v *view) current(own *memberRecord) (map[string]string, map[string]uint64) {
	records := v.records
	if own != nil {
		records = maps.Clone(v.records) // a few entries, one per member
		records[own.id] = storedRecord{record: own.record}
	}
	ids := slices.Sorted(maps.Keys(records))
	reserved, n := claims{}, 0
	for _, id := range ids {
		r := records[id]
		sess, live := v.members[id]
		if !live && !v.grace {
			continue
		}
		n += len(r.Leading) + len(r.Reserved)
		if !live || sess != r.Session {
			for s, tok := range r.Leading {
				reserved.add(s, id, tok)
			}
		}
		for _, s := range r.Reserved {
			reserved.add(s, id, 0)
		}
	}
	cur, tokens := make(map[string]string, n), make(map[string]uint64, n)
	for _, id := range ids {
		r := records[id]
		if sess, live := v.members[id]; !live || sess != r.Session {
			continue
		}
		for s, tok := range r.Leading {
			if _, ok := reserved[s]; ok {
				continue
			}
			if old, ok := tokens[s]; !ok || tok > old { // members in id order: ties keep the smaller
				cur[s], tokens[s] = id, tok
			}
		}
	}
	for s, c := range reserved {
		cur[s], tokens[s] = c.member, c.token
	}
	return cur, tokens
}

// memberRecord is one member's record, with its id.
type memberRecord struct {
	id string
	record
}

// claims keeps, per shard, the claim with the largest token; members are
// added in id order, so ties keep the smaller id.
type claims map[string]claim

type claim struct {
	member string
	token  uint64
}

func (c claims) add(shard, member string, token uint64) {
	if old, ok := c[shard]; !ok || token > old.token {
		c[shard] = claim{member, token}
	}
}
