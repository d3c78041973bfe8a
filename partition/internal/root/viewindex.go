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

// holderIndex is a View's per-shard claims. Most shards have one claim
// (their leader's), kept in claims by value: no allocation a shard, no
// pointer for the collector to follow but the key. The others' further
// claims (a handoff a record lags, a reservation beside a leadership)
// are in more. Member ids are interned (ids): a claim is 16 bytes.
type holderIndex struct {
	claims  map[string]claimEntry   // shard to its first claim
	more    map[string][]claimEntry // shard to its other claims, in no order; few
	ids     memberIDs               // the members that claims name
	eff     map[string]*effRecord   // member to the record its claims come from
	ownID   string                  // SetOwn's member ("" when none)
	changed map[string]struct{}     // shards whose holder may have changed
	leaders map[string]struct{}     // shards whose leader may have changed; nil until TrackLeaders
	hint    int                     // the shards expected (View.Expect), to size the maps once
}

// claimEntry is one record's claim on a shard: a leading entry with its
// token, or a reserved one (reserved: token 0). member is an index in the
// index's memberIDs.
type claimEntry struct {
	token    uint64
	member   uint32
	reserved bool
}

// memberIDs interns member ids: the index keeps a 4-byte number a claim
// in place of a 16-byte string header. Ids are never forgotten: they are
// the members whose records were ever read, a few.
type memberIDs struct {
	index map[string]uint32
	names []string
}

// of returns id's number, giving it one if it has none.
func (m *memberIDs) of(id string) uint32 {
	if i, ok := m.index[id]; ok {
		return i
	}
	if m.index == nil {
		m.index = map[string]uint32{}
	}
	i := uint32(len(m.names))
	m.index[id] = i
	m.names = append(m.names, id)
	return i
}

// name returns the id numbered i.
func (m *memberIDs) name(i uint32) string { return m.names[i] }

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
// counts as changed. The per-shard maps are made as large as Expect said
// (or the records read claim) at once, so that the records read while a
// member joins are indexed without the maps growing (and copying
// themselves) twenty times over. Once v tracks, it does nothing.
func (v *View) Track() {
	if v.idx != nil {
		return
	}
	n := max(v.expect, v.claimCount())
	v.idx = &holderIndex{claims: make(map[string]claimEntry, n), more: map[string][]claimEntry{}, eff: map[string]*effRecord{},
		changed: make(map[string]struct{}, n), hint: n}
	for id, r := range v.Records {
		v.idx.replace(v, id, effOf(&r.Record))
	}
}

// Expect tells v the number of shards its reader runs, before Track or
// TrackLeaders: the size their maps are made with.
func (v *View) Expect(shards int) { v.expect = shards }

// claimCount returns the claims of the records read.
func (v *View) claimCount() int {
	n := 0
	for _, r := range v.Records {
		n += len(r.Leading) + len(r.Reserved)
	}
	return n
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
	x.diffLeading(id, oldLeading, nextLeading)
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
	dropped, added := x.diffLeading(x.ownID, own.leading, next.Leading)
	for _, s := range dropped {
		delete(own.leading, s)
	}
	for _, s := range added {
		own.leading[s] = next.Leading[s]
	}
	if !slices.Equal(own.reserved, next.Reserved) {
		x.replaceReserved(x.ownID, own.reserved, next.Reserved)
		own.reserved = slices.Clone(next.Reserved)
	}
}

// diffLeading changes member id's leading claims from old to next and
// returns the shards whose claim it dropped (in old, not in next) and
// those it added or changed. It looks each shard of next up in old, and
// walks old only when some of its shards are not in next: a renewal (the
// same shards, some tokens new) costs one lookup a shard.
func (x *holderIndex) diffLeading(id string, old, next map[string]uint64) (dropped, added []string) {
	m, kept := x.ids.of(id), 0
	for s, tok := range next {
		ot, ok := old[s]
		if ok {
			kept++
		}
		if !ok || ot != tok {
			x.add(s, claimEntry{member: m, token: tok})
			added = append(added, s)
		}
	}
	if kept == len(old) {
		return nil, added
	}
	for s := range old {
		if _, ok := next[s]; !ok {
			x.drop(s, m, false)
			dropped = append(dropped, s)
		}
	}
	return dropped, added
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
	was, is, m := in(old), in(next), x.ids.of(id)
	for s := range was {
		if !is[s] {
			x.drop(s, m, true)
		}
	}
	for s := range is {
		if !was[s] {
			x.add(s, claimEntry{member: m, reserved: true})
		}
	}
}

// add sets member e.member's claim of its kind (leading or reserved) on
// shard s.
func (x *holderIndex) add(s string, e claimEntry) {
	x.mark(s)
	first, ok := x.claims[s]
	if !ok || first.member == e.member && first.reserved == e.reserved {
		x.claims[s] = e
		return
	}
	cs := x.more[s]
	for i := range cs {
		if cs[i].member == e.member && cs[i].reserved == e.reserved {
			cs[i] = e
			return
		}
	}
	x.more[s] = append(cs, e)
}

// drop removes member m's claim of its kind on shard s.
func (x *holderIndex) drop(s string, m uint32, reserved bool) {
	x.mark(s)
	first, ok := x.claims[s]
	if !ok {
		return
	}
	cs := x.more[s]
	if first.member == m && first.reserved == reserved {
		if len(cs) == 0 {
			delete(x.claims, s)
			return
		}
		x.claims[s] = cs[len(cs)-1]
		cs = cs[:len(cs)-1]
	} else {
		cs = slices.DeleteFunc(cs, func(e claimEntry) bool { return e.member == m && e.reserved == reserved })
	}
	if len(cs) == 0 {
		delete(x.more, s)
		return
	}
	x.more[s] = cs
}

// each calls f with every claim on shard s, in no order.
func (x *holderIndex) each(s string, f func(claimEntry)) {
	first, ok := x.claims[s]
	if !ok {
		return
	}
	f(first)
	if len(x.more) > 0 {
		for _, e := range x.more[s] {
			f(e)
		}
	}
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
	x := v.idx
	if x == nil {
		return "", 0, false
	}
	var res, lead claim
	var hasRes, hasLead bool
	better := func(c claim, has bool, id string, tok uint64) bool {
		return !has || tok > c.token || (tok == c.token && id < c.member)
	}
	x.each(s, func(e claimEntry) {
		id := x.ids.name(e.member)
		switch k := kindOf(v.Members, v.Grace, id, x.eff[id]); {
		case k == ignored:
		case e.reserved || k == reserving:
			tok := e.token
			if e.reserved {
				tok = 0
			}
			if better(res, hasRes, id, tok) {
				res, hasRes = claim{id, tok}, true
			}
		case better(lead, hasLead, id, e.token):
			lead, hasLead = claim{id, e.token}, true
		}
	})
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
	v.idx.more = shrunk(v.idx.more)
}

// shrunk returns m, or a copy of it once it holds far fewer entries than
// it may have held: a map keeps its capacity (maps.Clone too), and the
// further claims of a join or a rolling restart pass.
func shrunk(m map[string][]claimEntry) map[string][]claimEntry {
	if len(m) > 64 {
		return m
	}
	out := make(map[string][]claimEntry, len(m))
	for s, cs := range m {
		out[s] = cs
	}
	return out
}
