package root

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

// StoredRecord is a record with the version of the znode it was read from.
type StoredRecord struct {
	Record
	Version int32
}

// View is the observed state of a root: its live members, their records
// and the operator state, as watchers report them (Apply). One goroutine
// owns a View.
type View struct {
	Members  map[string]int64        // live member id to its session id
	Records  map[string]StoredRecord // member id to its record
	Operator StoredOperator          // the operator state
	OpRead   bool                    // the operator state has been read once
	Grace    bool                    // records of absent members reserve their shards

	idx    *holderIndex // per-shard claims, once Track was called (viewindex.go)
	expect int          // the shards the reader runs (Expect), to size idx's maps
}

// NewView returns an empty view; with grace, the records of absent
// members reserve their shards (Current).
func NewView(grace bool) *View {
	return &View{
		Members: map[string]int64{}, Records: map[string]StoredRecord{},
		Operator: StoredOperator{Version: -1}, Grace: grace,
	}
}

// Apply merges a watcher's update; after Track, it updates the claims
// per shard from what the update changed (viewindex.go).
func (v *View) Apply(u Update) {
	switch {
	case u.Members != nil:
		old := v.Members
		v.Members = u.Members
		if v.idx != nil {
			v.idx.membersChanged(v, old)
		}
	case u.Operator != nil:
		v.Operator, v.OpRead = *u.Operator, true
	case u.Rec == nil:
		delete(v.Records, u.Member)
		if v.idx != nil {
			v.idx.recordChanged(v, u.Member, nil)
		}
	default:
		v.Records[u.Member] = *u.Rec
		if v.idx != nil {
			v.idx.recordChanged(v, u.Member, &u.Rec.Record)
		}
	}
}

// Leaders returns the leader of every shard as the records publish it: the
// claim with the largest token (the later leader, when a record lags a
// handoff) among the records that live members wrote in their current
// session. Claims with token 0 (a final record's reservations) are not
// leaderships.
func (v *View) Leaders() map[string]Published {
	claims := 0
	for _, r := range v.Records {
		claims += len(r.Leading)
	}
	out := make(map[string]Published, claims) // sized once: growing it cost 3/4 of the time at 10,000 shards
	for id, r := range v.Records {
		if sess, live := v.Members[id]; !live || sess != r.Session {
			continue
		}
		for s, tok := range r.Leading {
			if p := (Published{id, zxidfence.Token(tok)}); tok != 0 && p.Supersedes(out[s]) {
				out[s] = p
			}
		}
	}
	return out
}

// LiveMembers returns the live member ids.
func (v *View) LiveMembers() []string {
	ids := make([]string, 0, len(v.Members))
	for id := range v.Members {
		ids = append(ids, id)
	}
	return ids
}

// Current returns the holder of every held shard (see the file comment),
// and the holders' tokens. Without a restart grace, the records of absent
// members are ignored. The reservations (few, but they take precedence)
// are collected first; the leaders' claims (most of the shards) then go
// straight into the result. own, when not nil, stands for its member's
// record in place of the one read: a member knows its own claims before
// its record's write is read back, or while its record is missing (the
// others deleted it when its session expired late in its grace).
func (v *View) Current(own *MemberRecord) (map[string]string, map[string]uint64) {
	records := v.Records
	if own != nil {
		records = maps.Clone(v.Records) // a few entries, one per member
		records[own.ID] = StoredRecord{Record: own.Record}
	}
	ids := slices.Sorted(maps.Keys(records))
	reserved, n := claims{}, 0
	for _, id := range ids {
		r := records[id]
		sess, live := v.Members[id]
		if !live && !v.Grace {
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
		if sess, live := v.Members[id]; !live || sess != r.Session {
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

// MemberRecord is one member's record, with its id.
type MemberRecord struct {
	ID string
	Record
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

// Weight returns member id's effective weight: the operator's, else the
// one its current record publishes, else 1.
func (v *View) Weight(id string) int {
	if w := v.Operator.Weights[id]; w > 0 {
		return w
	}
	if r, ok := v.Records[id]; ok && r.Session == v.Members[id] && r.Weight > 0 {
		return r.Weight
	}
	return 1
}

// Published is a shard's leader as the records publish it; the zero value
// is no leader.
type Published struct {
	Member string
	Token  zxidfence.Token
}

// Supersedes reports whether claim p wins over q: q is no leader, or p has
// the larger token (the later leader), or the same token and the smaller
// member id.
func (p Published) Supersedes(q Published) bool {
	return q.Member == "" || p.Token > q.Token || (p.Token == q.Token && p.Member < q.Member)
}
