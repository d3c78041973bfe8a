package member

import (
	"maps"
	"slices"
	"time"

	"github.com/zkelect/zkelect/partition/assign"
)

// Unavailable is the shards this member cannot lead now because the
// sibling session their elections sit on (a seat, S) is down
// (SeatHealth), by that session. Its record publishes them (record.Unavailable), and every
// member's assignment deals them to another member (DealUnavailable) until
// the session is up again. Only the loop goroutine touches it.
type Unavailable[S comparable] map[string]S

// Mark notes that shard s cannot be led on seat; false if it was noted.
func (u Unavailable[S]) Mark(s string, on S) bool {
	if _, ok := u[s]; ok {
		return false
	}
	u[s] = on
	return true
}

// ClearSeat forgets the shards noted on seat (it is up again) and reports
// whether there were any.
func (u Unavailable[S]) ClearSeat(on S) bool {
	n := len(u)
	maps.DeleteFunc(u, func(_ string, x S) bool { return x == on })
	return len(u) != n
}

// List returns the shards noted, sorted; nil when none.
func (u Unavailable[S]) List() []string {
	if len(u) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(u))
}

// Unavailable returns the shards the member publishes as unavailable,
// sorted: those on a down session (Unavail) and those without one
// (Unseated); nil when none.
func (c *Core[S]) Unavailable() []string {
	out := c.Unavail.List()
	if len(c.Unseated) == 0 {
		return out
	}
	for s := range c.Unseated {
		if _, dup := c.Unavail[s]; !dup {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// Unseated is the shards whose runner found no session to place its
// election on (a sibling session could not be opened: refused, or over a
// server's connection limit), each until when it counts as unavailable.
// After that the assignment may deal it here again, and a runner tries
// again: a shard led elsewhere meanwhile is handed back only once a
// candidate of ours waits in its election (the handoff's successor
// check), so a member still unable to open the session takes nothing.
// Only the loop goroutine touches it.
type Unseated map[string]time.Time

// Mark notes shard s as unseated until until.
func (u Unseated) Mark(s string, until time.Time) { u[s] = until }

// Expire forgets the shards whose time is over at now and reports whether
// any were; it returns the earliest deadline left (zero when none).
func (u Unseated) Expire(now time.Time) (bool, time.Time) {
	n := len(u)
	var next time.Time
	for s, until := range u {
		switch {
		case !now.Before(until):
			delete(u, s)
		case next.IsZero() || until.Before(next):
			next = until
		}
	}
	return len(u) != n, next
}

// DealUnavailable returns the assignment all with every shard that its
// target lists as unavailable (byMember: member → shards) dealt to another
// member of in: the shard's current holder if it can take it, else the
// member with the fewest shards in the assignment (ties to the smaller id)
// among the live members that are not drained and do not list the shard
// either. A shard pinned to its target, or that no other member can take,
// stays. It is a pure function of its arguments, so every member computes
// the same result from the same view; all is not modified.
func DealUnavailable(all map[string]string, in assign.Input, byMember map[string][]string) map[string]string {
	if len(byMember) == 0 {
		return all
	}
	count := map[string]int{}
	for _, m := range all {
		count[m]++
	}
	moved := UnavailableMoves(func(s string) string { return all[s] }, count, in, byMember)
	if len(moved) == 0 {
		return all
	}
	out := maps.Clone(all)
	maps.Copy(out, moved)
	return out
}

// UnavailableMoves is DealUnavailable's decision alone, from the
// assignment's target of a shard ("" for none) and count (member → shards
// the assignment gives it, for every live member; edited): the shards it
// moves, each to its new target. It costs the unavailable shards times
// the members, not the assignment's size.
func UnavailableMoves(target func(shard string) string, count map[string]int, in assign.Input, byMember map[string][]string) map[string]string {
	cannot := map[string]map[string]bool{} // shard → members that cannot lead it
	for m, shards := range byMember {
		for _, s := range shards {
			if cannot[s] == nil {
				cannot[s] = map[string]bool{}
			}
			cannot[s][m] = true
		}
	}
	pool := takersOf(in)
	moved := map[string]string{}
	for _, s := range slices.Sorted(maps.Keys(cannot)) {
		from := target(s)
		if from == "" || !cannot[s][from] || in.Pins[s] == from {
			continue
		}
		to := pickTaker(pool, cannot[s], in.Current[s], count)
		if to == "" {
			continue
		}
		moved[s] = to
		count[from]--
		count[to]++
	}
	return moved
}

// takersOf returns in's live members that are not drained, sorted (all of
// them when every one is drained, as assign.Assign does).
func takersOf(in assign.Input) []string {
	drained := map[string]bool{}
	for _, m := range in.Drained {
		drained[m] = true
	}
	var out []string
	for _, m := range in.Members {
		if !drained[m] {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		out = slices.Clone(in.Members)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// pickTaker returns the holder if it may take the shard, else the taker
// with the fewest shards (ties to the smaller id) not in cannot; "" when
// none may.
func pickTaker(pool []string, cannot map[string]bool, holder string, count map[string]int) string {
	if holder != "" && !cannot[holder] && slices.Contains(pool, holder) {
		return holder
	}
	best := ""
	for _, m := range pool {
		if !cannot[m] && (best == "" || count[m] < count[best]) {
			best = m
		}
	}
	return best
}
