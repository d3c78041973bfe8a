package member

import (
	"slices"
	"strings"
	"time"
)

// This file decides which records of absent members to collect
// (Collect), and ages the member's reservations, suspended leaderships
// and orphaned shards with them.

// Records is what the member keeps about the other members' records: since
// when each member with a record was seen absent, and the deletions of
// records planned, by the version they were planned at.
type Records struct {
	absentSince map[string]time.Time
	collecting  map[string]int32
}

// Forget drops what the member kept of member id's record (it is gone).
func (r *Records) Forget(id string) {
	delete(r.absentSince, id)
	delete(r.collecting, id)
}

// Record is what Collect reads of one member's record in the view.
type Record struct {
	ID      string
	Version int32             // the record's znode version, as read
	Live    bool              // the member is registered (its member znode is there)
	Leading map[string]uint64 // the shards the record claims
}

// RecordVersion names a record to delete at the version read.
type RecordVersion struct {
	ID      string
	Version int32
}

// Collect is the collect period's tick at f.Now: it ends the suspended
// claims older than a session timeout (each becomes a reservation), the
// orphaned shards past OrphanedTTL and the reservations whose time is
// over; and, while the view shows this member live (selfLive), it plans
// the deletion of each record (records) whose member has been absent for
// longer than the restart grace, once a version. A member first
// seen absent has its record's shards noted as orphaned (the failover
// metric). The plan is sorted by member.
func (c *Core[S]) Collect(f Facts, selfLive bool, records []Record) Plan {
	now := f.Now
	for _, s := range c.Grace.DropSuspended(now, f.SessionTimeout) {
		c.Leading.End(s, now)
	}
	c.ExpireOrphans(now)
	p := c.Expire(now)
	if !selfLive {
		return p
	}
	r := &c.Records
	for _, rec := range records {
		if rec.Live {
			delete(r.absentSince, rec.ID)
			continue
		}
		since, seen := r.absentSince[rec.ID]
		if !seen {
			since = now
			r.absentSince[rec.ID] = now
			for s := range rec.Leading {
				c.Orphan(s, now)
			}
		}
		if v, issued := r.collecting[rec.ID]; (issued && v == rec.Version) || now.Sub(since) < c.Grace.period {
			continue
		}
		r.collecting[rec.ID] = rec.Version
		p.DeleteRecords = append(p.DeleteRecords, RecordVersion{ID: rec.ID, Version: rec.Version})
	}
	slices.SortFunc(p.DeleteRecords, func(a, b RecordVersion) int { return strings.Compare(a.ID, b.ID) })
	return p
}
