package member

import "time"

// This file is the member's core state: what it knows of its shards'
// elections, each concern a named sub-state, and the session's facts a
// decision is given with the time.

// Facts are what the shell tells the core of its session and clock with
// each event and step: the core reads neither itself.
type Facts struct {
	Now            time.Time
	SessionTimeout time.Duration // the member's session timeout (the negotiated one)
	// ExpectedLive (ReconcileDue, during the startup wait): the members
	// the startup waits for (partition's Config.ExpectedMembers) are live.
	ExpectedLive bool
}

// Config is what a Core is made with, fixed for a run.
type Config struct {
	Me            string        // this member's id
	RestartGrace  time.Duration // Config.RestartGrace; negative: nothing is ever reserved
	StartupSettle time.Duration // Config.StartupSettle; negative: no startup wait
	Started       time.Time     // when the run started (the startup wait's start)
}

// Core is the member's state of its shards' elections, owned by the
// shell's one goroutine: what it claims in its record (Leading), its
// restart grace (Grace), its balancing handoffs (Handoffs), the shards it
// cannot lead on a sibling session down (Unavail, by seat S) or without a
// session (Unseated), the shards it saw orphaned by a member that left
// (for the failover metric), the pacing of its steps (Steps), the
// startup wait (Startup) and the freeze its last assignment honoured
// (Freeze). Runner events are fed with Report, which returns what the
// shell must do (a Plan); a step begins with Step (expiries, pacing),
// and one that decided goes on with ReconcileDue (the startup wait) and
// Reconcile (runners to start and withdraw, handoffs to queue): each
// returns a Plan the shell carries out.
type Core[S comparable] struct {
	Steps    Steps
	Startup  Startup
	Freeze   Freeze
	Leading  Leaderships
	Grace    Grace
	Handoffs Handoffs
	Unavail  Unavailable[S]
	Unseated Unseated
	Seats    map[S]*SeatHealth // what the member saw of each sibling session (Seat)
	Assign   Assignment
	Records  Records
	// orphaned maps each shard whose leader's member the shell saw gone to
	// when it saw it (Orphan), until it is led again (failover metric).
	orphaned map[string]time.Time
	settle   time.Duration // Config.StartupSettle
	me       string        // Config.Me
}

// NewCore returns the state of a run that leads nothing yet.
func NewCore[S comparable](cfg Config) *Core[S] {
	return &Core[S]{
		Startup: NewStartup(cfg.Started),
		Leading: NewLeaderships(), Grace: NewGrace(cfg.RestartGrace), Handoffs: NewHandoffs(),
		Unavail: Unavailable[S]{}, Unseated: Unseated{}, Seats: map[S]*SeatHealth{}, orphaned: map[string]time.Time{}, settle: cfg.StartupSettle, me: cfg.Me,
		Records: Records{absentSince: map[string]time.Time{}, collecting: map[string]int32{}},
	}
}

// OrphanedTTL bounds how long a shard whose leader left counts as
// orphaned for the failover metric: a takeover later than that is not
// measured.
const OrphanedTTL = time.Minute

// Orphan notes that shard s, claimed by a member the shell saw gone at
// now, is orphaned since now, unless this member leads it.
func (c *Core[S]) Orphan(s string, now time.Time) {
	if !c.Leading.Leads(s) {
		c.orphaned[s] = now
	}
}

// LedElsewhere notes the shards a live member's record claims (led):
// none of them is a failover of ours to time.
func (c *Core[S]) LedElsewhere(led map[string]uint64) {
	if len(c.orphaned) == 0 {
		return
	}
	for s := range led {
		delete(c.orphaned, s)
	}
}

// ExpireOrphans forgets the shards orphaned for longer than OrphanedTTL
// at now: taken over elsewhere, or never here.
func (c *Core[S]) ExpireOrphans(now time.Time) {
	for s, since := range c.orphaned {
		if now.Sub(since) > OrphanedTTL {
			delete(c.orphaned, s)
		}
	}
}

// MarkUnavailable marks the shards (ids) whose elections sit on the down
// seat on and are not led here (a suspended claim is not led), and ends
// the member's claims on them. It reports whether it marked any.
func (c *Core[S]) MarkUnavailable(ids []string, on S, now time.Time) bool {
	marked := false
	for _, id := range ids {
		if c.Leading.Leads(id) && !c.Grace.IsSuspended(id) {
			continue
		}
		if !c.Unavail.Mark(id, on) {
			continue
		}
		c.Leading.End(id, now)
		c.Grace.Resume(id)
		c.Grace.Release(id)
		marked = true
	}
	return marked
}
