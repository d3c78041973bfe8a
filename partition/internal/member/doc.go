// Package member is the partition member's pure core: the decisions a
// member takes from what it observed, with no goroutine, no clock, no
// session and no logger inside. Every method takes the time as an
// argument (now) and the session's facts as values; partition's loop (the
// shell) feeds it and carries out what it decides.
//
// Core is the member's state, each concern a named sub-state (no
// embedding), owned by the shell's one goroutine:
//
//   - Leading (Leaderships): what the member claims in its record, every
//     change marking the record to publish again;
//   - Grace: the restart grace (reservations, each with its deadline; the
//     leaderships suspended by a lost connection that the record still
//     claims; the lease the grace counts from after a session loss);
//   - Handoffs: the balancing handoffs (settle, queue, throttle);
//   - Unavail and Unseated: the shards the member cannot lead (a sibling
//     session down, SeatHealth; no session for the election), and the
//     failover times of shards orphaned by a member that left;
//   - Assign (Assignment): the assignment kept from changes
//     (assign.Assigner, fed what the view changed), the targets the
//     member acts on, and the operator moves whose clear it planned;
//   - Records: since when each absent member's record is absent, and the
//     deletions of records planned;
//   - Steps: what changed since the last step and the pacing of steps
//     (the step gap from the recent steps' cost, quiet steps spaced out,
//     urgent and due steps);
//   - Startup: the startup wait before the first elections start;
//   - Freeze: a freeze that lifts itself.
//
// Every decision returns a Plan the shell carries out in one place
// (partition's loopplan.go): a step (Step: expiries, freeze, pacing;
// Decide: the assignment, the shards some member cannot lead dealt
// elsewhere, reservations the balance voids, operator moves to clear;
// ReconcileDue: the startup wait; Reconcile: runners to start, withdraw
// and stop, handoffs settled and queued), a runner's event (Report:
// metrics to observe, a removed shard's election to delete, a step due),
// the collect period (Collect: records of absent members to delete) and
// a replaced session (NewSession: the shards reserved). DoneMoves and
// DealUnavailable are pure functions of the view.
//
// What the shell keeps is not a decision: the runners (by shard), what
// it read of the root (the view), the timer, and the record it last
// published. Leading is not a copy of the runners' shard.Held: Held is
// what OnStartedLeading was handed (the recipe.Leadership, read by any
// goroutine through Manager.Leaderships), written by the runners before
// their callbacks; Leading is what the record claims, written by the
// loop from the runners' reports, later than Held and beyond it (a
// leadership suspended by a lost connection stays claimed while the
// runner holds nothing; Grace). The record must never claim less than a
// leadership the other members could deal elsewhere, and Manager.
// Leaderships must never show one OnStartedLeading was not handed: one
// set cannot serve both.
//
// The shell, not an operator's tool, writes the operator moves' clears it
// is planned (ClearMoves): only the member knows when a move to it is
// done (it leads the shard), and only members see a void move's target
// gone; each is one version-checked write, planned once until the
// operator's state changes.
//
// The package imports nothing of recipe, partition or the connection
// layer (TestCoreIsPure checks it), and never reads the clock.
package member
