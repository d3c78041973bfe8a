package recipe

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

var phases = []phase{phaseIdle, phaseCampaigning, phaseLeading, phaseClosing, phaseClosed}

// TestPhaseTransitions lists every move between two different phases that
// a candidate may make, with what makes it; canEnter must allow exactly
// those (and staying put), and refuse the other 14.
func TestPhaseTransitions(t *testing.T) {
	allowed := map[[2]phase]string{
		{phaseIdle, phaseCampaigning}:    "Campaign, or a Campaign waiting when a Resign withdrew",
		{phaseIdle, phaseClosing}:        "Close, after withdrawing",
		{phaseCampaigning, phaseIdle}:    "withdraw: Resign, the last Campaign cancelled, a fatal error, the session closed",
		{phaseCampaigning, phaseLeading}: "becomeLeader: first in line, owner checked, lease holding",
		{phaseLeading, phaseCampaigning}: "endLead: resigned, suspended, expired, znode deleted, closed",
		{phaseClosing, phaseClosed}:      "finish: Close answered",
	}
	refused := 0
	for _, from := range phases {
		for _, to := range phases {
			why, want := allowed[[2]phase{from, to}]
			want = want || from == to
			if got := from.canEnter(to); got != want {
				t.Errorf("%v → %v: canEnter = %v, want %v %s", from, to, got, want, why)
			}
			if !want {
				refused++
			}
		}
	}
	if refused != 14 {
		t.Errorf("%d transitions refused, want 14 (25 pairs, 5 stays, 6 moves allowed)", refused)
	}
	for _, p := range phases {
		if p.inElection() != (p == phaseCampaigning || p == phaseLeading) {
			t.Errorf("%v.inElection() = %v", p, p.inElection())
		}
	}
}

// TestPhaseRefusedNamed: a leadership must end before its candidate leaves
// the election or closes, a candidate leads only from Campaigning, and
// Close is never left; each refusal named.
func TestPhaseRefusedNamed(t *testing.T) {
	for _, tc := range []struct {
		from, to phase
		why      string
	}{
		{phaseLeading, phaseIdle, "withdrawing while leading would leave a leadership on a deleted znode"},
		{phaseLeading, phaseClosing, "Close ends the leadership first"},
		{phaseIdle, phaseLeading, "a candidate out of the election has no znode to lead on"},
		{phaseCampaigning, phaseClosing, "Close withdraws first"},
		{phaseClosing, phaseCampaigning, "Campaign after Close fails with ErrClosed"},
		{phaseClosing, phaseIdle, "a closing candidate stays closing"},
		{phaseClosed, phaseClosing, "Close is answered once"},
		{phaseClosed, phaseCampaigning, "a closed candidate never campaigns again"},
		{phaseIdle, phaseClosed, "Close is answered from Closing only"},
	} {
		if tc.from.canEnter(tc.to) {
			t.Errorf("%v → %v allowed; want refused: %s", tc.from, tc.to, tc.why)
		}
	}
}

// TestEnterRefusedKeepsPhaseAndLogs: Candidate.enter applies an allowed
// transition, and on a refused one keeps the phase and logs an error
// naming both phases.
func TestEnterRefusedKeepsPhaseAndLogs(t *testing.T) {
	var out bytes.Buffer
	c := &Candidate{sess: &Session{log: zerolog.New(&out)}, path: "/e"}
	if !c.enter(phaseCampaigning) || !c.enter(phaseLeading) || c.st.phase != phaseLeading {
		t.Fatalf("Idle → Campaigning → Leading not applied: phase %v", c.st.phase)
	}
	if out.Len() != 0 {
		t.Fatalf("allowed transitions logged: %s", out.String())
	}
	if c.enter(phaseIdle) || c.st.phase != phaseLeading {
		t.Fatalf("Leading → Idle applied: phase %v", c.st.phase)
	}
	if log := out.String(); !strings.Contains(log, `"from":"leading"`) || !strings.Contains(log, `"to":"idle"`) || !strings.Contains(log, `"level":"error"`) {
		t.Fatalf("refusal not logged at error with both phases: %s", log)
	}
}

// TestSessionStates: every change of the session's state is recorded
// except leaving Closed, which is terminal.
func TestSessionStates(t *testing.T) {
	states := []sessState{sessDown, sessUsable, sessClosed}
	for _, from := range states {
		for _, to := range states {
			st := loopState{session: from}
			want := from != sessClosed || to == sessClosed
			if got := st.setSession(to); got != want {
				t.Errorf("%v → %v: setSession = %v, want %v", from, to, got, want)
			}
			if wantNow := map[bool]sessState{true: to, false: from}[want]; st.session != wantNow {
				t.Errorf("%v → %v: state now %v, want %v", from, to, st.session, wantNow)
			}
			if st.usable() != (st.session == sessUsable) {
				t.Errorf("%v: usable() = %v", st.session, st.usable())
			}
		}
	}
}

// TestStateNames: every value of each state enum has its own name.
func TestStateNames(t *testing.T) {
	for _, kind := range [][]fmt.Stringer{
		{phaseIdle, phaseCampaigning, phaseLeading, phaseClosing, phaseClosed},
		{sessDown, sessUsable, sessClosed},
		{outcomeKnown, outcomeUnknown, outcomeMaybeDuplicate},
		{proofNone, proofFirst, proofBehindLowest},
	} {
		seen := map[string]bool{}
		for _, s := range kind {
			n := s.String()
			if seen[n] || strings.Contains(n, "?") {
				t.Errorf("state name %q repeated or unknown", n)
			}
			seen[n] = true
		}
	}
	if phase(99).String() != "phase(?)" || sessState(99).String() != "session(?)" {
		t.Error("an out-of-range state has a name")
	}
}

// TestOutcomeTransitions: a lost create makes the outcome unknown; knowing
// our znode again leaves a possible duplicate until a sweep clears it; a
// clean outcome stays clean when resolved.
func TestOutcomeTransitions(t *testing.T) {
	for _, tc := range []struct {
		from       outcome
		op         func(*outcome)
		name       string
		want       outcome
		unknown    bool
		duplicates bool
	}{
		{outcomeKnown, (*outcome).lost, "lost", outcomeUnknown, true, true},
		{outcomeMaybeDuplicate, (*outcome).lost, "lost", outcomeUnknown, true, true},
		{outcomeUnknown, (*outcome).resolved, "resolved", outcomeMaybeDuplicate, false, true},
		{outcomeMaybeDuplicate, (*outcome).resolved, "resolved", outcomeMaybeDuplicate, false, true},
		{outcomeKnown, (*outcome).resolved, "resolved", outcomeKnown, false, false},
		{outcomeUnknown, (*outcome).cleared, "cleared", outcomeKnown, false, false},
		{outcomeMaybeDuplicate, (*outcome).cleared, "cleared", outcomeKnown, false, false},
	} {
		o := tc.from
		tc.op(&o)
		if o != tc.want || o.unknown() != tc.unknown || o.dupRisk() != tc.duplicates {
			t.Errorf("%v %s: %v (unknown %v, dupRisk %v), want %v (%v, %v)",
				tc.from, tc.name, o, o.unknown(), o.dupRisk(), tc.want, tc.unknown, tc.duplicates)
		}
	}
}

// TestProofDropVoidsOnlyItsOwn: an event that voids one proof (our znode's
// watch firing voids proofFirst, forgetting the predecessor voids
// proofBehindLowest) leaves the other.
func TestProofDropVoidsOnlyItsOwn(t *testing.T) {
	for _, from := range []proof{proofNone, proofFirst, proofBehindLowest} {
		for _, drop := range []proof{proofFirst, proofBehindLowest} {
			p := from
			p.drop(drop)
			want := from
			if from == drop {
				want = proofNone
			}
			if p != want {
				t.Errorf("%v drop %v: %v, want %v", from, drop, p, want)
			}
		}
	}
	if proof(9).String() != "proof(?)" || outcome(9).String() != "outcome(?)" {
		t.Error("an out-of-range proof or outcome has a name")
	}
}
