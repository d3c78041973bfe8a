package shard

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// This file is what a runner is given by its member (Env, Member) and what
// it reports back (Event). The package sees neither the member's loop nor
// its Manager: partition implements Env and reads the Events.

// The reasons a runner gives OnStoppedLeading for ends of its own making;
// partition exports them under the same names (its errors.go documents
// them for users).
var (
	// ErrHandoff: the leadership was handed over to another member.
	ErrHandoff = errors.New("partition: handed off for balance")
	// ErrWithdrawn: the candidate won just as its shard moved elsewhere,
	// and the leadership ended once the new target's candidate waited.
	ErrWithdrawn = errors.New("partition: withdrawn, shard assigned elsewhere")
	// ErrShardRemoved: the shard was removed from the member's list.
	ErrShardRemoved = errors.New("partition: shard removed")
	// ErrStopping: the member is stopping and resigns everything.
	ErrStopping = errors.New("partition: manager stopping")
)

// Env is what a runner needs from its member while it runs: the
// assignment and the shard's election path. Its methods are called from
// runner goroutines, concurrently.
type Env interface {
	// TargetOf returns the member the latest assignment targets shard to
	// ("" for none known).
	TargetOf(shard string) string
	// ElectionPath returns the znode path of shard's election.
	ElectionPath(shard string) string
	// CountStop counts a leadership's end for reason (a metric).
	CountStop(reason error)
}

// Member is what the runners of one member share, fixed for one run.
type Member struct {
	Env      Env
	MemberID string   // the candidates' participant id
	ACL      []zk.ACL // the candidates' znodes' ACL
	// HandoffTimeout bounds a resignation, the wait for a callback to
	// return, and the wait for a handoff's successor (successor.go).
	HandoffTimeout time.Duration
	Naming         recipe.Naming // the candidates' znode naming
	MetricsLabel   string        // the elections' recipe metrics label
	// OnStartedLeading and OnStoppedLeading are the user's callbacks
	// (partition.Config's); either may be nil.
	OnStartedLeading func(ctx context.Context, shard string, token zxidfence.Token)
	OnStoppedLeading func(shard string, reason error)
	Log              zerolog.Logger
	PassedOn         prometheus.Counter // wins resigned at once: assigned elsewhere
	Started          prometheus.Counter // leaderships started

	// Held is where the runners note the leaderships they hold (before
	// OnStartedLeading, and their end before OnStoppedLeading).
	Held *Held

	// Transitions bounds the member's handoffs in transition (their work
	// cancelled, not resigned yet: transitions.go); nil bounds nothing.
	Transitions *Transitions

	Primary  *recipe.Session // the member's session: reads an election before a handoff
	Sessions *Sessions       // where the elections are placed
	// Events receives every runner's reports; it is read until every
	// runner has reported Finished.
	Events chan<- Event
	// Workers counts the runners and their callbacks' goroutines.
	Workers *sync.WaitGroup
}

// EventKind says what a runner reports.
type EventKind uint8

// The kinds of Event.
const (
	Started   EventKind = iota // leadership accepted, OnStartedLeading called
	Stopped                    // leadership over, OnStoppedLeading returned
	Finished                   // runner returned; its candidate is closed
	Deferred                   // a handoff found no successor campaigning: still leading
	Suspended                  // leadership over for a lost connection, OnStoppedLeading returned; campaigning on
	Unseated                   // no session could be opened for its election: it cannot lead for now
)

// Event is one runner's report.
type Event struct {
	Runner *Runner
	Kind   EventKind
	Token  uint64 // Started: the leadership's token
	Reason error  // Stopped: why the leadership ended; Finished: why the candidate's znode stayed
}
