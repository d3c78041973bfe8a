package root

import (
	"maps"
	"slices"
)

// This file keeps, in a View that Track was called on, every shard's
// claims (which records lead or reserve it), updated by each Apply from
// what it changed: a record's delta costs its size, a member joining or
// leaving costs its record's. Holder then answers for one shard what
// Current answers for all, and Changed names the shards whose holder may
// have changed since it was last called, so that a member's assignment
// (assign.Assigner) follows the view without walking every record.

// holderIndex is a View's per-shard claims.
type holderIndex struct {
	claims  map[string][]claimEntry // shard to the records claiming it
	eff     map[string]*effRecord   // member to the record its claims come from
	ownID   string                  // SetOwn's member ("" when none)
	changed map[string]struct{}     // shards whose holder may have changed
	leaders map[string]struct{}     // shards whose leader may have changed; nil until TrackLeaders
}

// claimEntry is one record's claim on a shard: a leading entry with its
// token, or a reserved one (reserved: token 0).
type claimEntry struct {
	member   string
	token    uint64
	reserved bool
}

// effRecord is the part of a record that says what it holds. Records
// read from the root share their maps (never changed once read); SetOwn's
// is a copy the index keeps up to date.
type effRecord struct {
	session  int64
	leading  map[string]uint64
	reserved []string
}

// Claim kinds, by the state of the member whose record claims (see the
// file comment of view.go).
const (
	ignored   = iota // not live and no restart grace: its record counts for nothing
	reserving        // not live, or its record is of an earlier session: every claim a reservation
	leading          // live, record of its current session
)

// Track makes v keep per-shard claims from now on (Holder, Changed,
// SetOwn). It costs O(shards in the records) once; every shard held then
// counts as changed. Once v tracks, it does nothing.
func (v *View) Track() {
	if v.idx != nil {
		return
	}
	v.idx = &holderIndex{claims: map[string][]claimEntry{}, eff: map[string]*effRecord{}, changed: map[string]struct{}{}}
	for id, r := range v.Records {
		v.idx.replace(v, id, effOf(&r.Record))
	}
}

func effOf(r *Record) *effRecord {
	if r == nil {
		return nil
	}
	return &effRecord{session: r.Session, leading: r.Leading, reserved: r.Reserved}
}

// SetOwn makes own's record stand for its member's in Holder, in place of
// the one read (see Current); nil goes back to the one read. It costs
// O(own's shards). Without Track it does nothing.
func (v *View) SetOwn(own *MemberRecord) {
	x := v.idx
	if x == nil {
		return
	}
	if x.ownID != "" && (own == nil || own.ID != x.ownID) {
		id := x.ownID
		x.ownID = ""
		x.replace(v, id, x.readRecord(v, id))
	}
	if own == nil {
		return
	}
	if x.ownID == "" {
		x.ownID = own.ID
		x.replace(v, own.ID, &effRecord{session: own.Session, leading: maps.Clone(own.Leading), reserved: slices.Clone(own.Reserved)})
		return
	}
	x.updateOwn(v, &own.Record)
}

// readRecord returns member id's record as read, as an effRecord.
func (x *holderIndex) readRecord(v *View, id string) *effRecord {
	if r, ok := v.Records[id]; ok {
		return effOf(&r.Record)
	}
	return nil
}

// recordChanged follows Apply's change of member id's record (nil:
// deleted).
func (x *holderIndex) recordChanged(v *View, id string, r *Record) {
	if id == x.ownID {
		return // SetOwn's record stands for it
	}
	x.replace(v, id, effOf(r))
}

// membersChanged follows Apply's change of the live members from old.
func (x *holderIndex) membersChanged(v *View, old map[string]int64) {
	for id, r := range x.eff {
		if kindOf(old, v.Grace, id, r) != kindOf(v.Members, v.Grace, id, r) {
			x.markAll(r)
		}
	}
}

// kindOf returns the kind of member id's claims from record r with the
// live members members.
func kindOf(members map[string]int64, grace bool, id string, r *effRecord) int {
	sess, live := members[id]
	switch {
	case !live && !grace:
		return ignored
	case !live || sess != r.session:
		return reserving
	}
	return leading
}

// replace swaps member id's record for next (nil: none), changing only
// the claims that differ.
func (x *holderIndex) replace(v *View, id string, next *effRecord) {
	old := x.eff[id]
	if old != nil && next != nil && kindOf(v.Members, v.Grace, id, old) != kindOf(v.Members, v.Grace, id, next) {
		x.markAll(old)
	}
	var oldLeading, nextLeading map[string]uint64
	var oldReserved, nextReserved []string
	if old != nil {
		oldLeading, oldReserved = old.leading, old.reserved
	}
	if next != nil {
		nextLeading, nextReserved = next.leading, next.reserved
	}
	for s, tok := range oldLeading {
		if nt, ok := nextLeading[s]; !ok || nt != tok {
			x.drop(s, id, false)
		}
	}
	for s, tok := range nextLeading {
		if ot, ok := oldLeading[s]; !ok || ot != tok {
			x.add(s, claimEntry{member: id, token: tok})
		}
	}
	x.replaceReserved(id, oldReserved, nextReserved)
	if next == nil {
		delete(x.eff, id)
		return
	}
	x.eff[id] = next
}

// updateOwn brings SetOwn's copy up to next, changing only what differs.
func (x *holderIndex) updateOwn(v *View, next *Record) {
	own := x.eff[x.ownID]
	if kindOf(v.Members, v.Grace, x.ownID, own) != kindOf(v.Members, v.Grace, x.ownID, &effRecord{session: next.Session}) {
		x.markAll(own)
	}
	own.session = next.Session
	for s, tok := range own.leading {
		if nt, ok := next.Leading[s]; !ok || nt != tok {
			x.drop(s, x.ownID, false)
			delete(own.leading, s)
		}
	}
	for s, tok := range next.Leading {
		if ot, ok := own.leading[s]; !ok || ot != tok {
			x.add(s, claimEntry{member: x.ownID, token: tok})
			own.leading[s] = tok
		}
	}
	if !slices.Equal(own.reserved, next.Reserved) {
		x.replaceReserved(x.ownID, own.reserved, next.Reserved)
		own.reserved = slices.Clone(next.Reserved)
	}
}

// replaceReserved changes member id's reserved claims from old to next.
func (x *holderIndex) replaceReserved(id string, old, next []string) {
	if len(old) == 0 && len(next) == 0 {
		return
	}
	in := func(list []string) map[string]bool {
		set := make(map[string]bool, len(list))
		for _, s := range list {
			set[s] = true
		}
		return set
	}
	was, is := in(old), in(next)
	for s := range was {
		if !is[s] {
			x.drop(s, id, true)
		}
	}
	for s := range is {
		if !was[s] {
			x.add(s, claimEntry{member: id, reserved: true})
		}
	}
}

// add sets member e.member's claim of its kind (leading or reserved) on
// shard s.
func (x *holderIndex) add(s string, e claimEntry) {
	x.mark(s)
	cs := x.claims[s]
	for i := range cs {
		if cs[i].member == e.member && cs[i].reserved == e.reserved {
			cs[i] = e
			return
		}
	}
	x.claims[s] = append(cs, e)
}

// drop removes member id's claim of its kind on shard s.
func (x *holderIndex) drop(s, id string, reserved bool) {
	x.mark(s)
	cs := x.claims[s]
	cs = slices.DeleteFunc(cs, func(e claimEntry) bool { return e.member == id && e.reserved == reserved })
	if len(cs) == 0 {
		delete(x.claims, s)
		return
	}
	x.claims[s] = cs
}

// markAll marks every shard record r claims as changed.
func (x *holderIndex) markAll(r *effRecord) {
	for s := range r.leading {
		x.mark(s)
	}
	for _, s := range r.reserved {
		x.mark(s)
	}
}

// mark notes that shard s's holder, and its leader, may have changed.
func (x *holderIndex) mark(s string) {
	x.changed[s] = struct{}{}
	if x.leaders != nil {
		x.leaders[s] = struct{}{}
	}
}

// Holder returns the holder of shard s and its token as Current would
// (ok false: nobody holds it). It needs Track (ok is false without).
func (v *View) Holder(s string) (member string, token uint64, ok bool) {
	if v.idx == nil {
		return "", 0, false
	}
	var res, lead claim
	var hasRes, hasLead bool
	better := func(c claim, has bool, e claimEntry, tok uint64) bool {
		return !has || tok > c.token || (tok == c.token && e.member < c.member)
	}
	for _, e := range v.idx.claims[s] {
		r := v.idx.eff[e.member]
		switch k := kindOf(v.Members, v.Grace, e.member, r); {
		case k == ignored:
		case e.reserved || k == reserving:
			tok := e.token
			if e.reserved {
				tok = 0
			}
			if better(res, hasRes, e, tok) {
				res, hasRes = claim{e.member, tok}, true
			}
		case better(lead, hasLead, e, e.token):
			lead, hasLead = claim{e.member, e.token}, true
		}
	}
	switch {
	case hasRes:
		return res.member, res.token, true
	case hasLead:
		return lead.member, lead.token, true
	}
	return "", 0, false
}

// Changed calls f with every shard whose holder may have changed since
// the last call (or Track), with its holder as Holder returns it, and
// forgets them. Without Track it does nothing.
func (v *View) Changed(f func(shard, member string, token uint64, held bool)) {
	if v.idx == nil {
		return
	}
	for s := range v.idx.changed {
		m, tok, ok := v.Holder(s)
		f(s, m, tok, ok)
	}
	v.idx.changed = map[string]struct{}{} // clear would keep the capacity, and a walk of it costs O(capacity)
}
