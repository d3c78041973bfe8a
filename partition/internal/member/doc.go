// Package member is the partition member's pure core: the decisions a
// member takes from what it observed, with no goroutine, no clock, no
// session and no logger inside. Every method takes the time as an
// argument (now) and the session's facts as values; partition's loop (the
// shell) feeds it and carries out what it decides.
//
// What lives here so far, each a named sub-state of the loop:
//
//   - Grace: the restart grace (reservations, each with its deadline; the
//     leaderships suspended by a lost connection that the record still
//     claims; the lease the grace counts from after a session loss);
//   - Steps: what changed since the last step and the pacing of steps
//     (the step gap from the recent steps' cost, quiet steps spaced out,
//     urgent and due steps);
//   - Startup: the startup wait before the first elections start;
//   - SeatHealth: whether a sibling session can lead;
//   - Handoffs: the balancing handoffs (settle, queue, throttle);
//   - Freeze and DoneMoves: a freeze that lifts itself, moves done;
//   - Leaderships: what the member claims in its record, every change
//     marking the record to publish again.
//
// Still in partition's loop, to move here next: the assignment's
// targets, the runners' events (Report), unavailability, void moves
// and the records to collect.
//
// The package imports nothing of recipe, partition or the connection
// layer (TestCoreIsPure checks it), and never reads the clock.
package member
