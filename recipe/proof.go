package recipe

// What a candidate knows of its znode, besides its name and stat: whether a
// create may have left one it does not know of (outcome), and what proves
// its place in the election without a listing (proof). Each is one value at
// a time; the loop sets them, and reads them through the methods below.

// outcome is what the candidate knows of its creates' results.
type outcome uint8

const (
	// outcomeKnown: every create's result is known; no znode of ours
	// exists that the candidate does not know of.
	outcomeKnown outcome = iota
	// outcomeUnknown: a create may have been applied without our knowing
	// its name (its reply was lost, or it landed after a reconnect, a new
	// session or a withdrawal): the next listing adopts it or deletes it.
	outcomeUnknown
	// outcomeMaybeDuplicate: the candidate knows (or has adopted) its
	// znode, but since the last sweep listing a create's outcome was
	// unknown, so a duplicate may exist: a withdrawal sweeps before it is
	// done.
	outcomeMaybeDuplicate
)

// String returns the outcome's name.
func (o outcome) String() string {
	switch o {
	case outcomeKnown:
		return "known"
	case outcomeUnknown:
		return "unknown"
	case outcomeMaybeDuplicate:
		return "maybe_duplicate"
	}
	return "outcome(?)"
}

// lost records a create whose outcome is unknown.
func (o *outcome) lost() { *o = outcomeUnknown }

// resolved records that the candidate knows its znode again (created,
// adopted, or none found): a duplicate may remain until a sweep.
func (o *outcome) resolved() {
	if *o == outcomeUnknown {
		*o = outcomeMaybeDuplicate
	}
}

// cleared records a sweep listing that deleted every znode of ours.
func (o *outcome) cleared() { *o = outcomeKnown }

// unknown reports whether a znode of ours may exist under a name we do
// not know.
func (o outcome) unknown() bool { return o == outcomeUnknown }

// dupRisk reports whether, since the last sweep, a create's outcome was
// unknown.
func (o outcome) dupRisk() bool { return o != outcomeKnown }

// proof is what lets the candidate act on its place in the election
// without listing it again. Any session change and any new znode void it.
type proof uint8

const (
	// proofNone: nothing beyond the znode's name; the next step lists.
	proofNone proof = iota
	// proofFirst: our znode was first at the last listing (or promotion)
	// and was found ours with its watch armed, and no event came since, so
	// it may lead again on mineSt without a request once the lease holds.
	proofFirst
	// proofBehindLowest: the last listing, in this connection and with
	// suffixes in serial order (none straddling the wrap), showed pred as
	// the lowest znode. Sequence numbers only grow within a parent, so
	// nothing lower can have appeared since: pred's NodeDeleted alone
	// makes us first.
	proofBehindLowest
)

// String returns the proof's name.
func (p proof) String() string {
	switch p {
	case proofNone:
		return "none"
	case proofFirst:
		return "first"
	case proofBehindLowest:
		return "behind_lowest"
	}
	return "proof(?)"
}

// drop voids p if it is want (an event that voids one proof leaves the
// other).
func (p *proof) drop(want proof) {
	if *p == want {
		*p = proofNone
	}
}
