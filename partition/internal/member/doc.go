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
//   - Steps: what changed since the last step and the pacing of steps
//     (the step gap from the recent steps' cost, quiet steps spaced out,
//     urgent and due steps);
//   - Startup: the startup wait before the first elections start;
//   - Freeze: a freeze that lifts itself.
//
// It is fed the runners' events (Report, which returns the Plan the
// shell carries out: metrics to observe, a removed shard's election to
// delete, a step due) and stepped with the time and the session's facts
// (Step: expiries, freeze, pacing; ReconcileDue: the startup wait), then
// reconciled with the assignment (Reconcile: runners to start and
// withdraw, handoffs settled and queued); each returns a Plan the shell
// carries out. DoneMoves and DealUnavailable are pure functions of the view.
//
// Still in partition's loop, to move here next: the assignment itself
// (assign.Assigner, fed from the view: loopassign.go) and the targets
// it leaves (loop.targets), reading the sessions (noticeSession,
// checkSeats), void and done moves' clearing, stopping removed shards,
// and the records to collect (collect.go).
//
// The package imports nothing of recipe, partition or the connection
// layer (TestCoreIsPure checks it), and never reads the clock.
package member
